#include "run_common/run_schedule.h"

#include <algorithm>

#include "exchange/step_protocol.h"
#include "modes/traits.h"

namespace pstrain::run_common {

RunSchedule::RunSchedule(const config::TrainConfig& config, const comm::WorldLayout& layout, const DataPlan& data,
                         const std::optional<checkpoint::TrainingState>& resumed)
    : index_(data.shard_samples),
      trainer_samples_(data.trainer_samples),
      batch_size_(config.batch_size),
      steps_together_(modes::trainers_step_together(config.mode, layout.pservers)),
      passes_(config.passes),
      checkpoint_every_steps_(config.checkpoint_every_steps),
      cadence_(modes::meeting_cadence(config.mode, config.steps_alone)),
      consumed_(index_.total(), 0) {
  if (resumed) {
    first_pass_ = static_cast<int>(resumed->pass);
    first_global_step_ = resumed->global_step;
    steps_done_in_first_pass_ = resumed->step_in_pass;
    consumed_ = index_.join(resumed->consumed);
  }
  for (int trainer = 0; trainer < layout.trainers; ++trainer) {
    std::uint64_t left = 0;
    for (const std::size_t shard : data.trainer_shards[trainer]) {
      for (std::uint64_t sample = 0; sample < data.shard_samples[shard]; ++sample) {
        left += consumed_[index_.id(shard, sample)] == 0 ? 1 : 0;
      }
    }
    remaining_first_pass_.push_back(left);
  }
}

std::uint64_t RunSchedule::remaining(int trainer, int pass) const {
  return pass == first_pass_ ? remaining_first_pass_.at(trainer) : trainer_samples_.at(trainer);
}

namespace {

std::int64_t steps_for(std::uint64_t samples, std::uint64_t batch) {
  return static_cast<std::int64_t>((samples + batch - 1) / batch);
}

}  // namespace

std::int64_t RunSchedule::steps(int trainer, int pass) const {
  if (!steps_together_) return steps_for(remaining(trainer, pass), batch_size_);
  std::uint64_t largest = 0;
  for (std::size_t other = 0; other < remaining_first_pass_.size(); ++other)
    largest = std::max(largest, remaining(static_cast<int>(other), pass));
  return steps_for(largest, batch_size_);
}

std::int64_t RunSchedule::updates_per_pass(const config::TrainConfig& config, const comm::WorldLayout& layout,
                                           const DataPlan& data) {
  const std::uint64_t batch = config.batch_size;
  if (modes::trainers_step_together(config.mode, layout.pservers)) {
    return steps_for(*std::max_element(data.trainer_samples.begin(), data.trainer_samples.end()), batch);
  }
  if (config.dynamic_dispatch) {  // every chunk once per pass, whoever takes it
    const std::uint64_t samples = data.shard_samples.empty() ? 0 : data.trainer_samples.at(0);
    const std::uint64_t chunk = config.chunk_size;
    return static_cast<std::int64_t>(samples / chunk) * steps_for(chunk, batch) + steps_for(samples % chunk, batch);
  }
  std::int64_t updates = 0;
  for (const std::uint64_t samples : data.trainer_samples) updates += steps_for(samples, batch);
  return updates;
}

AfterStep RunSchedule::after_common_step(std::int64_t step, std::int64_t steps, std::int64_t global_step,
                                         int flags) const {
  if (step + 1 >= steps || !meets_after(step, steps)) return AfterStep::kGoOn;
  const bool due = (flags & exchange::kCheckpointNow) != 0 ||
                   (checkpoint_every_steps_ > 0 && global_step % checkpoint_every_steps_ == 0);
  if (!due) return AfterStep::kGoOn;
  return exchange::stops_after_checkpoint(flags) ? AfterStep::kCheckpointAndStop : AfterStep::kCheckpoint;
}

std::optional<bool> RunSchedule::stop_after_pass(int pass, int flags) const {
  if (!exchange::stops_after_checkpoint(flags)) return std::nullopt;
  return pass + 1 >= passes_;
}

}  // namespace pstrain::run_common
