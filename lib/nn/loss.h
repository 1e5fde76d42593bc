#pragma once
// The loss, apart from the graph: it reads the graph's output (the logits) and the labels, and writes
// d(mean loss)/d(logits) for backward to start from. A model file's last line names it (loss=, model_spec.h):
//   softmax  softmax cross-entropy over {classes} logits, with optional label smoothing (target
//            (1 - e) onehot + e / classes, as PyTorch's label_smoothing): classification
//   bce      binary cross-entropy with logits over one logit per sample and labels 0/1 (PyTorch's
//            BCEWithLogitsLoss): click-through rate
#include <cstdint>
#include <memory>
#include <string>

#include "compute/backend.h"
#include "nn/model.h"

namespace pstrain::nn {

enum class LossKind { kSoftmaxCrossEntropy, kBinaryCrossEntropy };

// "softmax" or "bce" (the model file's loss= values) and back; the parse throws Error(kUsage) naming the value.
LossKind parse_loss(const std::string& name);
std::string to_string(LossKind kind);

class Loss {
 public:
  virtual ~Loss() = default;
  // `logits` and `labels` in backend memory, `rows` samples. `dlogits` null: evaluation (no gradient). The loss
  // sum is the sum over the rows; `correct` counts the rows whose prediction is the label.
  virtual BatchResult operator()(compute::Backend& backend, const float* logits, const std::int32_t* labels,
                                 float* dlogits, int rows) const = 0;
};

class SoftmaxCrossEntropy final : public Loss {
 public:
  // Throws Error(kUsage) for label_smoothing outside [0, 1).
  SoftmaxCrossEntropy(std::size_t classes, float label_smoothing);

  // The loss sum is the smoothed loss when smoothing is on.
  BatchResult operator()(compute::Backend& backend, const float* logits, const std::int32_t* labels, float* dlogits,
                         int rows) const override;

 private:
  int classes_;
  float label_smoothing_;
};

// loss(x, y) = max(x, 0) - x y + log(1 + exp(-|x|)), which is -y log s(x) - (1 - y) log(1 - s(x)) with s the
// sigmoid, without overflow for any finite x; d loss / dx = s(x) - y. A row is correct when (x > 0) == y.
// One logit per row: the batch crosses to the host and back (rows floats each way), so every backend runs it.
class BinaryCrossEntropy final : public Loss {
 public:
  // Labels other than 0 and 1: Error(kInputData) naming the row and the label.
  BatchResult operator()(compute::Backend& backend, const float* logits, const std::int32_t* labels, float* dlogits,
                         int rows) const override;

  // The loss of one logit against a label in double precision, and its derivative: for the metrics and tests.
  static double loss(double logit, int label);
  static double gradient(double logit, int label);
};

// The loss a model file names over a model of `classes` classes; Error(kUsage) for label smoothing with bce.
std::unique_ptr<Loss> make_loss(LossKind kind, std::size_t classes, float label_smoothing);

}  // namespace pstrain::nn
