// Softmax cross-entropy against a direct double-precision computation, including logits large enough to
// overflow a naive exp(), with and without label smoothing (the target (1 - e) onehot + e / classes).
#include <cmath>

#include "backend_test_util.h"
#include "core/error.h"

namespace pstrain::compute::testing {
namespace {

struct Reference {
  double loss_sum = 0;
  std::size_t correct = 0;
  std::vector<double> dlogits;
};

// Computed in double. Shifting by the maximum is the definition of logsumexp here, not an optimisation:
// exp(1000) overflows even a double.
Reference reference(const std::vector<float>& logits, const std::vector<std::int32_t>& labels, int classes,
                    double smoothing) {
  const int rows = static_cast<int>(labels.size());
  Reference result;
  result.dlogits.resize(logits.size());
  for (int r = 0; r < rows; ++r) {
    const float* row = &logits[r * classes];
    double max = row[0];
    int arg_max = 0;
    for (int c = 1; c < classes; ++c) {
      if (row[c] > max) {
        max = row[c];
        arg_max = c;
      }
    }
    double sum = 0;
    for (int c = 0; c < classes; ++c) sum += std::exp(row[c] - max);
    for (int c = 0; c < classes; ++c) {
      const double target = (c == labels[r] ? 1.0 - smoothing : 0.0) + smoothing / classes;
      result.loss_sum -= target * (row[c] - max - std::log(sum));  // -sum_c t_c log p_c
      result.dlogits[r * classes + c] = (std::exp(row[c] - max) / sum - target) / rows;
    }
    if (arg_max == labels[r]) ++result.correct;
  }
  return result;
}

void check(Backend& backend, const std::vector<float>& logits, const std::vector<std::int32_t>& labels, int classes,
           float smoothing = 0.0f) {
  const int rows = static_cast<int>(labels.size());
  const Reference expected = reference(logits, labels, classes, smoothing);
  auto logits_buffer = to_backend(backend, logits);
  auto labels_buffer = to_backend(backend, labels);
  Buffer<float> dlogits_buffer(backend, logits.size());

  const auto result = backend.softmax_cross_entropy(logits_buffer.data(), labels_buffer.data(), dlogits_buffer.data(),
                                                    rows, classes, smoothing);
  EXPECT_NEAR(result.loss_sum, expected.loss_sum, 1e-5 * (1 + std::abs(expected.loss_sum)));
  EXPECT_EQ(result.correct, expected.correct);
  const auto dlogits = to_host(backend, dlogits_buffer);
  for (std::size_t i = 0; i < dlogits.size(); ++i) {
    ASSERT_TRUE(std::isfinite(dlogits[i])) << i;
    ASSERT_NEAR(dlogits[i], expected.dlogits[i], 1e-6) << i;
  }

  // Without a gradient buffer the loss and the count are the same.
  const auto loss_only =
      backend.softmax_cross_entropy(logits_buffer.data(), labels_buffer.data(), nullptr, rows, classes, smoothing);
  EXPECT_EQ(loss_only.loss_sum, result.loss_sum);
  EXPECT_EQ(loss_only.correct, result.correct);
}

TEST_F(BackendTest, SoftmaxCrossEntropyMatchesDoubleReference) {
  const int rows = 7;
  const int classes = 5;
  const auto logits = random_floats(rows * classes, 11, -4.0f, 4.0f);
  check(*backend_, logits, {0, 1, 2, 3, 4, 0, 2}, classes);
}

TEST_F(BackendTest, SoftmaxCrossEntropyWithLabelSmoothingMatchesDoubleReference) {
  const int rows = 6;
  const int classes = 4;
  const auto logits = random_floats(rows * classes, 12, -3.0f, 3.0f);
  check(*backend_, logits, {0, 1, 2, 3, 3, 1}, classes, 0.1f);
  check(*backend_, logits, {0, 1, 2, 3, 3, 1}, classes, 0.5f);
}

TEST_F(BackendTest, SoftmaxCrossEntropyIsStableForLargeLogits) {
  const int classes = 3;
  // exp(1000) and exp(-1000) would overflow / underflow without the max shift.
  const std::vector<float> logits{1000,  999,   990,  //
                                  -1000, -1002, -1001, 80, 85, 88.5f};
  check(*backend_, logits, {1, 0, 2}, classes);
}

TEST_F(BackendTest, SoftmaxCrossEntropyOfUniformLogitsIsLogClasses) {
  auto logits = to_backend(*backend_, std::vector<float>(2 * 10, 3.0f));
  auto labels = to_backend(*backend_, std::vector<std::int32_t>{4, 7});
  const auto result = backend_->softmax_cross_entropy(logits.data(), labels.data(), nullptr, 2, 10, 0.0f);
  EXPECT_NEAR(result.loss_sum, 2 * std::log(10.0), 1e-6);
}

TEST_F(BackendTest, SoftmaxCrossEntropyRejectsLabelOutOfRange) {
  auto logits = to_backend(*backend_, std::vector<float>(3, 0.0f));
  auto labels = to_backend(*backend_, std::vector<std::int32_t>{3});
  try {
    backend_->softmax_cross_entropy(logits.data(), labels.data(), nullptr, 1, 3, 0.0f);
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kInputData);
  }
}

}  // namespace
}  // namespace pstrain::compute::testing
