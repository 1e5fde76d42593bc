#pragma once
// Where training starts (the beginning, or a checkpoint) and how many steps each pass takes: computed
// identically on every rank, servers included, so that sync rounds and checkpoints line up without messages.
#include <cstdint>
#include <optional>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "train/checkpointing.h"
#include "train/job_context.h"

namespace pstrain::train {

class Progress {
 public:
  Progress(const JobContext& job, const std::optional<checkpoint::TrainingState>& resumed);

  int first_pass() const { return first_pass_; }
  std::int64_t first_global_step() const { return first_global_step_; }
  std::int64_t steps_done_in_first_pass() const { return steps_done_in_first_pass_; }
  const SampleIndex& samples() const { return index_; }
  // Flags per sample id: trained on already in the first pass (all zero without a checkpoint).
  const std::vector<std::uint8_t>& consumed_in_first_pass() const { return consumed_; }

  // Samples of trainer t still to train in `pass` (everything after the first pass).
  std::uint64_t remaining(int trainer, int pass) const;
  // Steps trainer t takes in `pass`: sync takes the largest trainer's count for everyone.
  std::int64_t steps(int trainer, int pass) const;

 private:
  const JobContext& job_;
  SampleIndex index_;
  int first_pass_ = 0;
  std::int64_t first_global_step_ = 0;
  std::int64_t steps_done_in_first_pass_ = 0;
  std::vector<std::uint8_t> consumed_;
  std::vector<std::uint64_t> remaining_first_pass_;  // per trainer
};

}  // namespace pstrain::train
