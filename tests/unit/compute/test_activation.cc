// Activation names, forward values against double-precision references, and backward against the analytic
// derivative written in terms of the input.
#include <cmath>
#include <limits>

#include "backend_test_util.h"
#include "core/error.h"

namespace pstrain::compute::testing {
namespace {

double reference_forward(Activation activation, double x) {
  switch (activation) {
    case Activation::kRelu: return x > 0 ? x : 0;
    case Activation::kTanh: return std::tanh(x);
    case Activation::kSigmoid: return 1 / (1 + std::exp(-x));
  }
  return 0;
}

double reference_derivative(Activation activation, double x) {
  switch (activation) {
    case Activation::kRelu: return x > 0 ? 1 : 0;
    case Activation::kTanh: return 1 - std::tanh(x) * std::tanh(x);
    case Activation::kSigmoid: return reference_forward(activation, x) * (1 - reference_forward(activation, x));
  }
  return 0;
}

TEST(ActivationNames, ParseAndPrintRoundTrip) {
  for (Activation activation : {Activation::kRelu, Activation::kTanh, Activation::kSigmoid}) {
    EXPECT_EQ(parse_activation(to_string(activation)), activation);
  }
  EXPECT_EQ(to_string(Activation::kSigmoid), "sigmoid");
}

TEST(ActivationNames, UnknownNameIsAUsageError) {
  try {
    parse_activation("gelu");
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kUsage);
    EXPECT_STREQ(error.what(), "unknown activation 'gelu' (expected relu, tanh or sigmoid)");
  }
}

class ActivationTest : public BackendTest, public ::testing::WithParamInterface<Activation> {};

TEST_P(ActivationTest, ForwardAndBackwardMatchReference) {
  const Activation activation = GetParam();
  auto x = random_floats(101, 7, -6.0f, 6.0f);
  x.push_back(60.0f);  // saturating inputs must stay finite
  x.push_back(-60.0f);
  const auto dy = random_floats(x.size(), 8);

  auto x_buffer = to_backend(*backend_, x);
  auto dy_buffer = to_backend(*backend_, dy);
  Buffer<float> y_buffer(*backend_, x.size());
  Buffer<float> dx_buffer(*backend_, x.size());
  backend_->activation_forward(activation, x_buffer.data(), y_buffer.data(), x.size());
  backend_->activation_backward(activation, y_buffer.data(), dy_buffer.data(), dx_buffer.data(), x.size());
  const auto y = to_host(*backend_, y_buffer);
  const auto dx = to_host(*backend_, dx_buffer);

  for (std::size_t i = 0; i < x.size(); ++i) {
    ASSERT_NEAR(y[i], reference_forward(activation, x[i]), 1e-6 * (1 + std::abs(x[i]))) << "x=" << x[i];
    ASSERT_NEAR(dx[i], dy[i] * reference_derivative(activation, x[i]), 1e-6) << "x=" << x[i];
  }
}

TEST_P(ActivationTest, MayRunInPlace) {
  const Activation activation = GetParam();
  const auto x = random_floats(33, 9, -3.0f, 3.0f);
  auto buffer = to_backend(*backend_, x);
  backend_->activation_forward(activation, buffer.data(), buffer.data(), x.size());
  const auto y = to_host(*backend_, buffer);
  for (std::size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(y[i], reference_forward(activation, x[i]), 1e-6);
}

INSTANTIATE_TEST_SUITE_P(All, ActivationTest,
                         ::testing::Values(Activation::kRelu, Activation::kTanh, Activation::kSigmoid),
                         [](const auto& info) { return to_string(info.param); });

TEST_F(BackendTest, ReluPropagatesNanSoDivergenceIsNotHidden) {
  auto buffer = to_backend(*backend_, std::vector<float>{std::numeric_limits<float>::quiet_NaN(), -1.0f});
  backend_->activation_forward(Activation::kRelu, buffer.data(), buffer.data(), 2);
  const auto y = to_host(*backend_, buffer);
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], 0.0f);
}

}  // namespace
}  // namespace pstrain::compute::testing
