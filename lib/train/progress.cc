#include "train/progress.h"

#include <algorithm>

namespace pstrain::train {

Progress::Progress(const JobContext& job, const std::optional<checkpoint::TrainingState>& resumed)
    : job_(job), index_(job.data.shard_samples), consumed_(index_.total(), 0) {
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

std::uint64_t Progress::remaining(int trainer, int pass) const {
  return pass == first_pass_ ? remaining_first_pass_.at(trainer) : job_.data.trainer_samples.at(trainer);
}

std::int64_t Progress::steps(int trainer, int pass) const {
  const std::uint64_t batch = job_.config.batch_size;
  const auto steps_for = [&](std::uint64_t samples) {
    return static_cast<std::int64_t>((samples + batch - 1) / batch);
  };
  if (!job_.steps_together()) return steps_for(remaining(trainer, pass));
  std::uint64_t largest = 0;
  for (int other = 0; other < job_.layout.trainers; ++other) largest = std::max(largest, remaining(other, pass));
  return steps_for(largest);
}

}  // namespace pstrain::train
