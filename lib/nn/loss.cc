#include "nn/loss.h"

#include "core/error.h"

namespace pstrain::nn {

SoftmaxCrossEntropy::SoftmaxCrossEntropy(std::size_t classes, float label_smoothing)
    : classes_(static_cast<int>(classes)), label_smoothing_(label_smoothing) {
  if (!(label_smoothing >= 0.0f && label_smoothing < 1.0f)) {
    throw Error(ExitCode::kUsage, cat("--label-smoothing ", label_smoothing, " is outside [0, 1)"));
  }
}

BatchResult SoftmaxCrossEntropy::operator()(compute::Backend& backend, const float* logits, const std::int32_t* labels,
                                            float* dlogits, int rows) const {
  const auto result = backend.softmax_cross_entropy(logits, labels, dlogits, rows, classes_, label_smoothing_);
  return {result.loss_sum, result.correct, static_cast<std::size_t>(rows)};
}

}  // namespace pstrain::nn
