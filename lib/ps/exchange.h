#pragma once
// Policies, not branches: how a trainer turns its gradient into the next parameters. Local (one rank, its own
// optimizer), sync and async are three small objects behind one interface; the training loop never asks which
// one it has.
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "comm/layout.h"
#include "optim/optimizer.h"
#include "ps/client.h"

namespace pstrain::ps {

// Staleness of applied gradients: how many updates the shard had applied between the version a gradient was
// computed on and the moment it was applied.
struct StalenessStats {
  static constexpr std::size_t kBuckets = 64;  // the last bucket holds everything >= 63
  std::array<std::int64_t, kBuckets> histogram{};
  std::int64_t count = 0;
  std::int64_t sum = 0;
  std::int64_t max = 0;
  void record(std::int64_t staleness);
  double mean() const { return count ? static_cast<double>(sum) / static_cast<double>(count) : 0.0; }
  std::int64_t percentile(double fraction) const;
};

struct ExchangeTimers {
  double gate_seconds = 0;  // ssp: waiting for the slowest trainer to come within the staleness bound
  double push_seconds = 0;  // putting gradients (and, async, waiting for the slot to be free)
  double sync_seconds = 0;  // barriers: waiting for the other trainers and the servers' update
  double pull_seconds = 0;  // getting parameters
  double allreduce_seconds = 0;  // allreduce: agreeing on the step and summing the gradients
  double update_seconds = 0;     // allreduce: the trainer's own optimizer step
};

// Control decisions every rank must take together at a sync step boundary; agreed by OR over all ranks.
enum StepFlags : int {
  kCheckpointNow = 1,         // write a checkpoint after this step
  kStopAfterCheckpoint = 2,   // ... then end the job cleanly (SIGTERM / SIGUSR1)
};

class ParameterExchange {
 public:
  virtual ~ParameterExchange() = default;
  // Fills `parameters` with the starting parameters (after the job's start barrier).
  virtual void start(std::span<float> parameters) = 0;
  // `gradient` is d(mean loss)/d(parameters) over `count` samples; on return `parameters` holds what to compute
  // the next step on. count may be 0 (a trainer with no samples left in a sync step still takes part).
  // `flags` (StepFlags) go in with this rank's wishes and come out agreed where the mode has a common step
  // boundary (sync: OR over every rank; local: unchanged); async leaves them untouched.
  virtual void step(std::span<const float> gradient, std::size_t count, std::span<float> parameters,
                    int& flags) = 0;
  // Modes that combine gradients where the model keeps them (all-reduce: NCCL in GPU memory, MPI_Allreduce in
  // host memory) do it here, after the backward pass and before the trainer reads the gradient out of the model:
  // afterwards the model's gradient buffer holds the average over all trainers, which the trainer then passes to
  // step() even if it had no samples itself (count 0: its stale buffer counts for nothing). Agrees on `flags`
  // like step(). Returns false (and does nothing) in the modes that exchange through step() alone.
  virtual bool combine_in_place(std::size_t count, int& flags) {
    static_cast<void>(count);
    static_cast<void>(flags);
    return false;
  }
  // Collective over the trainers: afterwards every trainer holds the same parameters, including every update of
  // the pass.
  virtual void finish_pass(std::span<float> parameters) = 0;
  // Training is over (servers may stop).
  virtual void finish() = 0;

  // Async checkpoints: post this trainer's wish (StepFlags, 0 for none) and return the request standing for
  // everyone (0: none); then quiesce(): wait until every push of ours is applied and count ourselves in. Modes
  // with a common step boundary (sync, local) agree on flags in step() instead and return 0 here.
  virtual int checkpoint_request(int wish) { return wish & 0; }
  virtual void quiesce() {}
  // Async: run by finish_pass when a checkpoint is requested while this trainer waits for the others to end the
  // pass (a trainer still stepping asked for it and will not come to the meeting until it is written). The
  // handler returns true when the checkpoint was a stop: the requester will not come, so finish_pass gives up.
  virtual void set_checkpoint_handler(std::function<bool()> handler) { static_cast<void>(handler); }

  // The optimizer this exchange runs itself (local training), whose state a checkpoint must hold; else null.
  virtual optim::Optimizer* own_optimizer() { return nullptr; }

  ExchangeTimers& timers() { return timers_; }
  StalenessStats& staleness() { return staleness_; }
  // ssp: how many steps this trainer was ahead of the slowest one when it went on (never more than s).
  StalenessStats& clock_lead() { return clock_lead_; }

 protected:
  ExchangeTimers timers_;
  StalenessStats staleness_;
  StalenessStats clock_lead_;
};

std::unique_ptr<ParameterExchange> make_local_exchange(std::unique_ptr<optim::Optimizer> optimizer,
                                                       std::span<const float> initial);
std::unique_ptr<ParameterExchange> make_sync_exchange(PsClient& client);
// `trainers` is the communicator of all trainers (for the end-of-pass agreement); `poll_interval` is the pause
// between two looks at a shard's control words while waiting for an update to be applied.
std::unique_ptr<ParameterExchange> make_async_exchange(PsClient& client, MPI_Comm trainers,
                                                       std::chrono::microseconds poll_interval);
// Async with bounded staleness: a trainer never starts a step more than `staleness` steps ahead of the slowest.
std::unique_ptr<ParameterExchange> make_ssp_exchange(PsClient& client, MPI_Comm trainers,
                                                     std::chrono::microseconds poll_interval, int staleness);

}  // namespace pstrain::ps
