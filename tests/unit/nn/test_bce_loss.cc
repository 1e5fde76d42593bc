// Binary cross-entropy with logits against its closed form -y log s - (1 - y) log(1 - s) (s the sigmoid, in long
// double), its derivative against central differences of the loss, its stability at large logits, and the batch
// operator's mean gradient and label check.
#include <gtest/gtest.h>

#include <cmath>

#include "backend_test_util.h"
#include "core/error.h"
#include "nn/loss.h"

namespace pstrain::nn {
namespace {

using compute::testing::to_backend;
using compute::testing::to_host;

long double closed_form(long double x, int y) {
  const long double s = 1.0L / (1.0L + std::exp(-x));
  return y == 1 ? -std::log(s) : -std::log(1.0L - s);
}

TEST(BinaryCrossEntropyTest, LossIsTheClosedFormCrossEntropyOfTheSigmoid) {
  for (const double x : {-8.0, -2.5, -0.3, 0.0, 0.1, 1.7, 6.0}) {
    for (const int y : {0, 1}) {
      EXPECT_NEAR(BinaryCrossEntropy::loss(x, y), static_cast<double>(closed_form(x, y)), 1e-12) << x << " " << y;
    }
  }
}

TEST(BinaryCrossEntropyTest, GradientIsSigmoidMinusLabelAndMatchesFiniteDifferences) {
  for (const double x : {-8.0, -2.5, -0.3, 0.0, 0.1, 1.7, 6.0}) {
    for (const int y : {0, 1}) {
      const double h = 1e-5;
      const double numeric = (BinaryCrossEntropy::loss(x + h, y) - BinaryCrossEntropy::loss(x - h, y)) / (2 * h);
      EXPECT_NEAR(BinaryCrossEntropy::gradient(x, y), numeric, 1e-8) << x << " " << y;
      EXPECT_NEAR(BinaryCrossEntropy::gradient(x, y), 1 / (1 + std::exp(-x)) - y, 1e-15) << x << " " << y;
    }
  }
}

TEST(BinaryCrossEntropyTest, LargeLogitsGiveFiniteLossesAndGradients) {
  // A confident wrong prediction costs |x|; a confident right one costs about e^-|x|.
  EXPECT_DOUBLE_EQ(BinaryCrossEntropy::loss(1000.0, 0), 1000.0);
  EXPECT_DOUBLE_EQ(BinaryCrossEntropy::loss(-1000.0, 1), 1000.0);
  EXPECT_EQ(BinaryCrossEntropy::loss(1000.0, 1), 0.0);
  EXPECT_NEAR(BinaryCrossEntropy::loss(40.0, 1), std::exp(-40.0), 1e-30);
  EXPECT_EQ(BinaryCrossEntropy::gradient(-1000.0, 1), -1.0);
  EXPECT_EQ(BinaryCrossEntropy::gradient(1000.0, 1), 0.0);
}

class BinaryCrossEntropyBatchTest : public compute::testing::BackendTest {};

TEST_F(BinaryCrossEntropyBatchTest, SumsLossesCountsCorrectRowsAndWritesTheMeanGradient) {
  const std::vector<float> logits{2.0f, -1.0f, 0.5f, -3.0f};
  const std::vector<std::int32_t> labels{1, 1, 0, 0};
  auto device_logits = to_backend(*backend_, logits);
  auto device_labels = to_backend(*backend_, labels);
  compute::Buffer<float> dlogits(*backend_, 4);
  const BatchResult result =
      BinaryCrossEntropy()(*backend_, device_logits.data(), device_labels.data(), dlogits.data(), 4);
  double expected_sum = 0;
  for (std::size_t i = 0; i < 4; ++i) expected_sum += static_cast<double>(closed_form(logits[i], labels[i]));
  EXPECT_NEAR(result.loss_sum, expected_sum, 1e-6);
  EXPECT_EQ(result.correct, 2u);  // rows 0 and 3
  EXPECT_EQ(result.count, 4u);
  const auto gradients = to_host(*backend_, dlogits);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_NEAR(gradients[i], (1 / (1 + std::exp(-logits[i])) - labels[i]) / 4.0, 1e-7) << i;
  }
}

TEST_F(BinaryCrossEntropyBatchTest, ALabelOtherThanZeroOrOneIsAnInputDataError) {
  auto device_logits = to_backend(*backend_, std::vector<float>{0.0f, 1.0f});
  auto device_labels = to_backend(*backend_, std::vector<std::int32_t>{1, 2});
  try {
    BinaryCrossEntropy()(*backend_, device_logits.data(), device_labels.data(), nullptr, 2);
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kInputData);
    EXPECT_NE(std::string(error.what()).find("sample 1 of the batch has label 2"), std::string::npos) << error.what();
  }
}

TEST(LossChoiceTest, LabelSmoothingIsRefusedWithBce) {
  EXPECT_THROW(make_loss(LossKind::kBinaryCrossEntropy, 2, 0.1f), Error);
  EXPECT_NE(make_loss(LossKind::kBinaryCrossEntropy, 2, 0.0f), nullptr);
}

}  // namespace
}  // namespace pstrain::nn
