#pragma once
// The loss, apart from the graph: it reads the graph's output (the logits) and the labels, and writes
// d(mean loss)/d(logits) for backward to start from. One loss today, softmax cross-entropy with optional label
// smoothing (target (1 - e) onehot + e / classes, as PyTorch's label_smoothing).
#include <cstdint>

#include "compute/backend.h"
#include "nn/model.h"

namespace pstrain::nn {

class SoftmaxCrossEntropy {
 public:
  // Throws Error(kUsage) for label_smoothing outside [0, 1).
  SoftmaxCrossEntropy(std::size_t classes, float label_smoothing);

  // `dlogits` null: evaluation (no gradient). The loss sum is the smoothed loss when smoothing is on.
  BatchResult operator()(compute::Backend& backend, const float* logits, const std::int32_t* labels, float* dlogits,
                         int rows) const;

 private:
  int classes_;
  float label_smoothing_;
};

}  // namespace pstrain::nn
