#pragma once
// Copies a trainer's samples into one contiguous batch; with --augment each image is augmented on the way, by a
// pure function of (seed, pass, sample id), so a resumed or re-laid-out run sees exactly the same images.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "data/augment.h"
#include "data/shard.h"
#include "run_common/trainer_samples.h"

namespace pstrain::trainer {

class BatchAssembler {
 public:
  BatchAssembler(const run_common::TrainerSamples& samples, std::size_t batch_size, const data::AugmentSpec& augment,
                 std::uint64_t seed);

  // Copies samples order[first, first + n) (held: TrainerSamples::hold) into one contiguous batch; `ids` maps a
  // local sample to its id.
  void assemble(const std::vector<std::uint32_t>& order, std::size_t first, std::size_t n,
                const std::vector<std::uint64_t>& ids, int pass);
  // Writable: the exchange may rewrite a batch's ids as places in the trainer's row caches (ps/table_client.h).
  std::span<float> features(std::size_t n) { return {features_.data(), n * width_}; }
  std::span<const std::int32_t> labels(std::size_t n) const { return {labels_.data(), n}; }
  // The batch's categorical fields (CTR data), null for data without them: what Model::set_categorical takes.
  const core::JaggedIds* categorical() const { return has_bags_ ? &bags_ : nullptr; }

 private:
  const run_common::TrainerSamples& samples_;
  std::size_t width_;
  data::AugmentSpec augment_;
  data::ImageShape shape_;
  std::uint64_t seed_;
  std::vector<float> features_;
  std::vector<float> source_;  // with augmentation: the sample before it is augmented into features_
  std::vector<std::int32_t> labels_;
  bool has_bags_;
  core::JaggedIds bags_;
};

}  // namespace pstrain::trainer
