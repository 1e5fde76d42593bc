#include "run/run_schedule.h"

#include <algorithm>

#include "exchange/step_protocol.h"

namespace pstrain::train {

RunSchedule::RunSchedule(const JobContext& job, const std::optional<checkpoint::TrainingState>& resumed)
    : job_(job),
      index_(job.data.shard_samples),
      passes_(job.config.passes),
      checkpoint_every_steps_(job.config.checkpoint_every_steps),
      steps_between_meetings_(job.mode().trainers_step_alone ? job.config.geo_steps : 1),
      consumed_(index_.total(), 0) {
  if (resumed) {
    first_pass_ = static_cast<int>(resumed->pass);
    first_global_step_ = resumed->global_step;
    steps_done_in_first_pass_ = resumed->step_in_pass;
    consumed_ = index_.join(resumed->consumed);
  }
  for (int trainer = 0; trainer < job.layout.trainers; ++trainer) {
    std::uint64_t left = 0;
    for (const std::size_t shard : job.data.trainer_shards[trainer]) {
      for (std::uint64_t sample = 0; sample < job.data.shard_samples[shard]; ++sample) {
        left += consumed_[index_.id(shard, sample)] == 0 ? 1 : 0;
      }
    }
    remaining_first_pass_.push_back(left);
  }
}

std::uint64_t RunSchedule::remaining(int trainer, int pass) const {
  return pass == first_pass_ ? remaining_first_pass_.at(trainer) : job_.data.trainer_samples.at(trainer);
}

std::int64_t RunSchedule::steps(int trainer, int pass) const {
  const std::uint64_t batch = job_.config.batch_size;
  const auto steps_for = [&](std::uint64_t samples) {
    return static_cast<std::int64_t>((samples + batch - 1) / batch);
  };
  if (!job_.steps_together()) return steps_for(remaining(trainer, pass));
  std::uint64_t largest = 0;
  for (int other = 0; other < job_.layout.trainers; ++other) largest = std::max(largest, remaining(other, pass));
  return steps_for(largest);
}

AfterStep RunSchedule::after_common_step(std::int64_t step, std::int64_t steps, std::int64_t global_step,
                                         int flags) const {
  if (step + 1 >= steps || !meets_after(step, steps)) return AfterStep::kGoOn;
  const bool due = (flags & exchange::kCheckpointNow) != 0 ||
                   (checkpoint_every_steps_ > 0 && global_step % checkpoint_every_steps_ == 0);
  if (!due) return AfterStep::kGoOn;
  return exchange::stops_after_checkpoint(flags) ? AfterStep::kCheckpointAndStop : AfterStep::kCheckpoint;
}

bool RunSchedule::meets_after(std::int64_t step, std::int64_t steps) const {
  return (step + 1) % steps_between_meetings_ == 0 || step + 1 >= steps;
}

std::optional<bool> RunSchedule::stop_after_pass(int pass, int flags) const {
  if (!exchange::stops_after_checkpoint(flags)) return std::nullopt;
  return pass + 1 >= passes_;
}

}  // namespace pstrain::train
