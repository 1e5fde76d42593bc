#pragma once
// The interface every exchange mode implements: how a trainer's gradient becomes the parameters of its next step.
// Local training (one rank, its own optimizer, lib/exchange/local_exchange.h), the parameter-server modes sync,
// async and ssp (lib/ps) and all-reduce (lib/allreduce) are small objects behind it; the trainer loop never asks
// which one it has. Who waits for whom in each mode: lib/exchange/step_protocol.h.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>

#include "exchange/exchange_stats.h"
#include "nn/parameter_stream.h"
#include "optim/optimizer.h"

namespace pstrain::exchange {

class GradientExchange {
 public:
  virtual ~GradientExchange() = default;
  // Fills `parameters` with the starting parameters (after the job's start barrier).
  virtual void start(std::span<float> parameters) = 0;
  // Before a training batch of `count` samples (`features`, as the model reads them): modes whose servers hold
  // row tables by rows (ps/table_plan.h) fetch the rows the batch looks up into the tables' caches in `parameters`
  // and rewrite the batch's ids as places in those caches. Returns whether `parameters` changed (the caller then
  // hands them to the model).
  virtual bool fetch_for_batch(std::span<float> features, std::size_t count, std::span<float> parameters) {
    static_cast<void>(features);
    static_cast<void>(count);
    static_cast<void>(parameters);
    return false;
  }
  // The same before an evaluation batch (the lead trainer, at the end of a pass).
  virtual bool fetch_for_evaluation(std::span<float> features, std::size_t count, std::span<float> parameters) {
    static_cast<void>(features);
    static_cast<void>(count);
    static_cast<void>(parameters);
    return false;
  }
  // Those modes: rows [first, first + count) of row table `table` (ps::TablePlan order) into `out`, as the
  // servers hold them (the pass folders write whole tables a block at a time). Returns false elsewhere.
  virtual bool read_table_rows(std::size_t table, std::uint64_t first, std::uint64_t count, std::span<float> out) {
    static_cast<void>(table);
    static_cast<void>(first);
    static_cast<void>(count);
    static_cast<void>(out);
    return false;
  }
  // Communication behind computation (nn/parameter_stream.h): a mode that can send the gradient while the
  // backward pass runs and receive the next parameters while the forward pass runs returns the stream the
  // model should report to, working in place on the model's host buffers `gradient` and `parameters`; null
  // where the mode exchanges in step() alone. Called once, before the first step, and only for a model that can
  // report (nn::Model::can_stream_parameters): an exchange that returned a stream relies on its reports.
  virtual nn::ParameterStream* stream_in_place(std::span<const float> gradient, std::span<float> parameters) {
    static_cast<void>(gradient);
    static_cast<void>(parameters);
    return nullptr;
  }
  // Before the computation of every training step (count: the step's samples, 0 for none), streaming or not,
  // after every other MPI call of the step: until step() the trainer's only MPI calls are its stream's, made from
  // the model's reports during the computation.
  virtual void begin_step(std::size_t count) { static_cast<void>(count); }
  // `gradient` is d(mean loss)/d(parameters) over `count` samples; on return `parameters` holds what to compute
  // the next step on. count may be 0 (a trainer with no samples left in a sync step still takes part).
  // `flags` (StepFlags) go in with this rank's wishes and come out agreed where the mode has a common step
  // boundary (sync: OR over every rank; local: unchanged); async leaves them untouched.
  virtual void step(std::span<const float> gradient, std::size_t count, std::span<float> parameters, int& flags) = 0;
  // A step after which this trainer meets nobody (run/run_schedule.h meets_after; only in modes whose trainers
  // step alone between meetings, config/modes.h): it updates its own parameters. The other modes meet after
  // every step and are never asked.
  virtual void step_alone(std::span<const float> gradient, std::size_t count, std::span<float> parameters) {
    static_cast<void>(gradient);
    static_cast<void>(count);
    static_cast<void>(parameters);
    throw std::logic_error("this exchange mode meets the servers after every step");
  }
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

  // The optimizer this exchange runs itself (local and all-reduce training), whose state a checkpoint must hold;
  // else null.
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

}  // namespace pstrain::exchange
