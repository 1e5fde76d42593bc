#pragma once
// The run's schedule, computed once and read by both roles: where training starts (the beginning, or a
// checkpoint), how many steps each pass takes, and, in runs whose trainers step together, after which step a
// checkpoint is written and where the run stops. Every rank builds the same schedule from the configuration, the
// layout and the resumed state; the servers' loop (server/server_role.cc) and the trainers' (trainer/trainer_loop.cc,
// trainer/trainer_checkpoints.cc) both walk it instead of deriving it, so sync rounds and checkpoints line up
// without messages (the meetings themselves: exchange/step_protocol.h).
#include <cstdint>
#include <optional>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "comm/layout.h"
#include "config/train_config.h"
#include "exchange/meeting_cadence.h"
#include "run_common/checkpointing.h"
#include "run_common/data_plan.h"

namespace pstrain::run_common {

// Where the run stands, as a checkpoint records it.
struct StepPosition {
  int pass = 0;
  std::int64_t step_in_pass = 0;  // steps of `pass` done, counting those before a resume
  std::int64_t global_step = 0;
};

// What follows a common step (or a pass), the same on every rank given the step's agreed flags.
enum class AfterStep {
  kGoOn,              // the next step (or pass)
  kCheckpoint,        // every rank saves, then goes on
  kCheckpointAndStop  // every rank saves, then the run ends "stopped" (SIGTERM / SIGUSR1)
};

class RunSchedule {
 public:
  RunSchedule(const config::TrainConfig& config, const comm::WorldLayout& layout, const DataPlan& data,
              const std::optional<checkpoint::TrainingState>& resumed);

  int first_pass() const { return first_pass_; }
  int passes() const { return passes_; }
  std::int64_t first_global_step() const { return first_global_step_; }
  std::int64_t steps_done_in_first_pass() const { return steps_done_in_first_pass_; }
  // Steps of `pass` done before this run started (a resume mid-pass), 0 for every later pass.
  std::int64_t steps_before(int pass) const { return pass == first_pass_ ? steps_done_in_first_pass_ : 0; }
  const SampleIndex& samples() const { return index_; }
  // Flags per sample id: trained on already in the first pass (all zero without a checkpoint).
  const std::vector<std::uint8_t>& consumed_in_first_pass() const { return consumed_; }

  // Samples of trainer t still to train in `pass` (everything after the first pass).
  std::uint64_t remaining(int trainer, int pass) const;
  // Steps trainer t takes in `pass` (static dispatch): where trainers step together, the largest trainer's count.
  std::int64_t steps(int trainer, int pass) const;
  // The optimizer updates of a whole pass (run_common/update_plan.h): its common steps where the trainers step
  // together; else every trainer's steps (under dynamic dispatch: every chunk's batches once, whoever takes them).
  static std::int64_t updates_per_pass(const config::TrainConfig& config, const comm::WorldLayout& layout,
                                       const DataPlan& data);

  // Runs whose trainers step together (modes/traits.h trainers_step_together), every rank alike:
  // the steps of `pass`, and what follows step `step` (from 0) of them at `global_step` given the agreed flags. A
  // mid-pass checkpoint is due on an agreed kCheckpointNow or every --checkpoint-every-steps, never after the
  // pass's last step: the end-of-pass checkpoint covers it.
  std::int64_t common_steps(int pass) const { return steps(0, pass); }
  // Where trainers and servers meet (the mode's cadence, exchange/meeting_cadence.h): after step `step` (from 0,
  // counted from where this run entered the pass) of `steps`, and the first meeting at or after `step`.
  const exchange::MeetingCadence& cadence() const { return cadence_; }
  bool meets_after(std::int64_t step, std::int64_t steps) const { return cadence_.meets_after(step, steps); }
  std::int64_t next_meeting(std::int64_t step, std::int64_t steps) const { return cadence_.next_meeting(step, steps); }
  AfterStep after_common_step(std::int64_t step, std::int64_t steps, std::int64_t global_step, int flags) const;
  // After `pass`'s end-of-pass checkpoint (every mode), given the flags it was written with: none when the run goes
  // on (or ends after its last pass), else it stops here, completed when `pass` was the last.
  std::optional<bool> stop_after_pass(int pass, int flags) const;

 private:
  SampleIndex index_;
  std::vector<std::uint64_t> trainer_samples_;  // per trainer, in a whole pass
  std::uint64_t batch_size_ = 1;
  bool steps_together_ = true;
  int first_pass_ = 0;
  int passes_ = 0;
  std::int64_t first_global_step_ = 0;
  std::int64_t steps_done_in_first_pass_ = 0;
  std::int64_t checkpoint_every_steps_ = 0;
  exchange::MeetingCadence cadence_;
  std::vector<std::uint8_t> consumed_;
  std::vector<std::uint64_t> remaining_first_pass_;  // per trainer
};

}  // namespace pstrain::run_common
