#include "trainer/batch_assembler.h"

#include <cstring>

namespace pstrain::trainer {

BatchAssembler::BatchAssembler(const run_common::TrainerSamples& samples, std::size_t batch_size,
                               const data::AugmentSpec& augment, std::uint64_t seed)
    : samples_(samples),
      width_(samples.meta().sample_size()),
      augment_(augment),
      shape_(data::check_augmentable(augment, samples.meta())),
      seed_(seed),
      features_(batch_size * width_),
      labels_(batch_size),
      has_bags_(samples.meta().categorical.has_value()) {}

void BatchAssembler::assemble(const std::vector<std::uint32_t>& order, std::size_t first, std::size_t n,
                              const std::vector<std::uint64_t>& ids, int pass) {
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t sample = order[first + i];
    const std::span<float> target(features_.data() + i * width_, width_);
    if (augment_.enabled()) {
      source_.resize(width_);
      samples_.copy_features(sample, source_);
      data::augment_image(augment_, shape_, seed_, static_cast<std::uint64_t>(pass), ids[sample], source_, target);
    } else {
      samples_.copy_features(sample, target);
    }
    labels_[i] = samples_.label(sample);
  }
  if (has_bags_) {
    samples_.gather_bags(std::span<const std::uint32_t>(order).subspan(first, n), bags_);
  }
}

}  // namespace pstrain::trainer
