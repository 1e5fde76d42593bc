// The activation "layer" as the MLP uses it: backward (written in terms of the forward output) against central
// finite differences of L = sum(f(x) * r).
#include <cmath>

#include "backend_test_util.h"

namespace pstrain::compute::testing {
namespace {

class ActivationGradientTest : public BackendTest, public ::testing::WithParamInterface<Activation> {
 protected:
  double loss(const std::vector<float>& x, const std::vector<float>& r) {
    auto x_buffer = to_backend(*backend_, x);
    Buffer<float> y_buffer(*backend_, x.size());
    backend_->activation_forward(GetParam(), x_buffer.data(), y_buffer.data(), x.size());
    const auto y = to_host(*backend_, y_buffer);
    double sum = 0;
    for (std::size_t i = 0; i < y.size(); ++i) sum += static_cast<double>(y[i]) * r[i];
    return sum;
  }
};

TEST_P(ActivationGradientTest, BackwardMatchesFiniteDifferences) {
  auto x = random_floats(40, 31, -3.0f, 3.0f);
  for (float& value : x) {
    if (std::abs(value) < 0.05f) value = 0.5f;  // keep relu's kink out of the finite-difference window
  }
  const auto r = random_floats(x.size(), 32);

  auto x_buffer = to_backend(*backend_, x);
  auto r_buffer = to_backend(*backend_, r);
  Buffer<float> y_buffer(*backend_, x.size());
  Buffer<float> dx_buffer(*backend_, x.size());
  backend_->activation_forward(GetParam(), x_buffer.data(), y_buffer.data(), x.size());
  backend_->activation_backward(GetParam(), y_buffer.data(), r_buffer.data(), dx_buffer.data(), x.size());
  const auto dx = to_host(*backend_, dx_buffer);

  constexpr float kStep = 1e-2f;
  for (std::size_t i = 0; i < x.size(); ++i) {
    auto shifted = x;
    shifted[i] = x[i] + kStep;
    const double plus = loss(shifted, r);
    shifted[i] = x[i] - kStep;
    const double minus = loss(shifted, r);
    const double numeric = (plus - minus) / (2.0 * kStep);
    EXPECT_NEAR(dx[i], numeric, 1e-3 + 1e-2 * std::abs(numeric)) << "x=" << x[i];
  }
}

INSTANTIATE_TEST_SUITE_P(All, ActivationGradientTest,
                         ::testing::Values(Activation::kRelu, Activation::kTanh, Activation::kSigmoid),
                         [](const auto& info) { return to_string(info.param); });

}  // namespace
}  // namespace pstrain::compute::testing
