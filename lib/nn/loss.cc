#include "nn/loss.h"

#include <cmath>
#include <vector>

#include "core/error.h"

namespace pstrain::nn {

LossKind parse_loss(const std::string& name) {
  if (name == "softmax") return LossKind::kSoftmaxCrossEntropy;
  if (name == "bce") return LossKind::kBinaryCrossEntropy;
  throw Error(ExitCode::kUsage, cat("loss=", name, ": expected softmax or bce"));
}

std::string to_string(LossKind kind) {
  return kind == LossKind::kBinaryCrossEntropy ? "bce" : "softmax";
}

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

double BinaryCrossEntropy::loss(double logit, int label) {
  return std::max(logit, 0.0) - logit * label + std::log1p(std::exp(-std::abs(logit)));
}

double BinaryCrossEntropy::gradient(double logit, int label) {
  // The sigmoid from exp(-|x|) <= 1, so that neither branch overflows.
  const double e = std::exp(-std::abs(logit));
  const double sigmoid = logit >= 0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
  return sigmoid - label;
}

BatchResult BinaryCrossEntropy::operator()(compute::Backend& backend, const float* logits, const std::int32_t* labels,
                                           float* dlogits, int rows) const {
  const auto count = static_cast<std::size_t>(rows);
  std::vector<float> host_logits(count);
  std::vector<std::int32_t> host_labels(count);
  backend.copy_to_host(host_logits.data(), logits, count * sizeof(float));
  backend.copy_to_host(host_labels.data(), labels, count * sizeof(std::int32_t));
  BatchResult result{.loss_sum = 0, .correct = 0, .count = count};
  std::vector<float> host_gradients(dlogits != nullptr ? count : 0);
  for (std::size_t row = 0; row < count; ++row) {
    const int label = host_labels[row];
    if (label != 0 && label != 1) {
      throw Error(ExitCode::kInputData, cat("sample ", row, " of the batch has label ", label,
                                            ": binary cross-entropy needs labels 0 and 1"));
    }
    const double logit = host_logits[row];
    result.loss_sum += loss(logit, label);
    if ((logit > 0) == (label == 1)) ++result.correct;
    if (dlogits != nullptr)
      host_gradients[row] = static_cast<float>(gradient(logit, label) / static_cast<double>(count));
  }
  if (dlogits != nullptr) backend.copy_from_host(dlogits, host_gradients.data(), count * sizeof(float));
  return result;
}

std::unique_ptr<Loss> make_loss(LossKind kind, std::size_t classes, float label_smoothing) {
  if (kind == LossKind::kSoftmaxCrossEntropy) return std::make_unique<SoftmaxCrossEntropy>(classes, label_smoothing);
  if (label_smoothing != 0.0f) {
    throw Error(ExitCode::kUsage,
                cat("--label-smoothing ", label_smoothing, " applies to softmax cross-entropy, not to loss=bce"));
  }
  return std::make_unique<BinaryCrossEntropy>();
}

}  // namespace pstrain::nn
