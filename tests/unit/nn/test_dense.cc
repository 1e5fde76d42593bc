// The dense layer's forward against a naive product, and dW, db, dx against central finite differences of the
// scalar loss L = sum(y * r), whose gradient with respect to y is r.
#include <cmath>
#include <limits>

#include "backend_test_util.h"
#include "nn/dense.h"

namespace pstrain::nn {
namespace {

using compute::Buffer;
using compute::testing::random_floats;
using compute::testing::to_backend;
using compute::testing::to_host;

constexpr int kInputs = 5;
constexpr int kOutputs = 4;
constexpr int kBatch = 3;

class DenseTest : public compute::testing::BackendTest {
 protected:
  DenseTest()
      : weight_host_(random_floats(kOutputs * kInputs, 21)),
        bias_host_(random_floats(kOutputs, 22)),
        x_host_(random_floats(kBatch * kInputs, 23)),
        r_host_(random_floats(kBatch * kOutputs, 24)),
        weight_(*backend_, weight_host_.size()),
        bias_(*backend_, bias_host_.size()),
        weight_gradient_(*backend_, weight_host_.size()),
        bias_gradient_(*backend_, bias_host_.size()),
        x_(*backend_, x_host_.size()),
        y_(*backend_, kBatch * kOutputs),
        layer_(*backend_, kInputs, kOutputs,
               DenseView{weight_.data(), bias_.data(), weight_gradient_.data(), bias_gradient_.data()}) {
    upload();
  }

  void upload() {
    backend_->copy_from_host(weight_.data(), weight_host_.data(), weight_host_.size() * sizeof(float));
    backend_->copy_from_host(bias_.data(), bias_host_.data(), bias_host_.size() * sizeof(float));
    backend_->copy_from_host(x_.data(), x_host_.data(), x_host_.size() * sizeof(float));
  }

  double loss() {
    upload();
    layer_.forward(x_.data(), y_.data(), kBatch);
    const auto y = to_host(*backend_, y_);
    double sum = 0;
    for (std::size_t i = 0; i < y.size(); ++i) sum += static_cast<double>(y[i]) * r_host_[i];
    return sum;
  }

  // Central difference of loss() with respect to host[index]; restores the value afterwards.
  double finite_difference(std::vector<float>& host, std::size_t index) {
    constexpr float kStep = 1e-2f;  // L is linear in every parameter, so a large step costs no accuracy
    const float original = host[index];
    host[index] = original + kStep;
    const double plus = loss();
    host[index] = original - kStep;
    const double minus = loss();
    host[index] = original;
    return (plus - minus) / (2.0 * kStep);
  }

  std::vector<float> weight_host_, bias_host_, x_host_, r_host_;
  Buffer<float> weight_, bias_, weight_gradient_, bias_gradient_, x_, y_;
  Dense layer_;
};

TEST_F(DenseTest, ForwardIsInputTimesWeightTransposedPlusBias) {
  loss();
  const auto y = to_host(*backend_, y_);
  for (int row = 0; row < kBatch; ++row) {
    for (int out = 0; out < kOutputs; ++out) {
      double expected = bias_host_[out];
      for (int in = 0; in < kInputs; ++in) expected += double{x_host_[row * kInputs + in]} * weight_host_[out * kInputs + in];
      EXPECT_NEAR(y[row * kOutputs + out], expected, 1e-6);
    }
  }
}

TEST_F(DenseTest, GradientsMatchFiniteDifferences) {
  loss();
  auto dy = to_backend(*backend_, r_host_);
  Buffer<float> dx(*backend_, x_host_.size());
  // Poison the gradient buffers: backward must overwrite, not accumulate.
  backend_->fill(weight_gradient_.data(), weight_gradient_.size(), std::numeric_limits<float>::quiet_NaN());
  backend_->fill(bias_gradient_.data(), bias_gradient_.size(), std::numeric_limits<float>::quiet_NaN());
  layer_.backward(x_.data(), dy.data(), dx.data(), kBatch);
  const auto weight_gradient = to_host(*backend_, weight_gradient_);
  const auto bias_gradient = to_host(*backend_, bias_gradient_);
  const auto input_gradient = to_host(*backend_, dx);

  for (std::size_t i = 0; i < weight_host_.size(); ++i) {
    EXPECT_NEAR(weight_gradient[i], finite_difference(weight_host_, i), 1e-3) << "dW[" << i << "]";
  }
  for (std::size_t i = 0; i < bias_host_.size(); ++i) {
    EXPECT_NEAR(bias_gradient[i], finite_difference(bias_host_, i), 1e-3) << "db[" << i << "]";
  }
  for (std::size_t i = 0; i < x_host_.size(); ++i) {
    EXPECT_NEAR(input_gradient[i], finite_difference(x_host_, i), 1e-3) << "dx[" << i << "]";
  }
}

TEST_F(DenseTest, FirstLayerSkipsInputGradient) {
  loss();
  auto dy = to_backend(*backend_, r_host_);
  layer_.backward(x_.data(), dy.data(), nullptr, kBatch);
  for (float value : to_host(*backend_, weight_gradient_)) EXPECT_TRUE(std::isfinite(value));
}

}  // namespace
}  // namespace pstrain::nn
