// Every parameter gradient of a tiny CNN (two conv blocks, a hidden dense layer) against central finite
// differences of the mean batch loss, for each activation. The loss is summed in double by the backend, so fp32
// activations with a 1e-3 step leave the difference accurate to about 1e-4.
#include <cmath>

#include "backend_test_util.h"
#include "model_test_util.h"
#include "nn/model.h"

namespace pstrain::nn {
namespace {

using compute::Activation;
using compute::testing::random_floats;

class CnnGradientTest : public compute::testing::BackendTest, public ::testing::WithParamInterface<Activation> {};

TEST_P(CnnGradientTest, ParameterGradientsMatchFiniteDifferences) {
  // 6x6x2 -> conv1 (3 filters) -> pool 3x3x3 -> conv2 (4 filters) -> pool 1x1x4 -> fc1 (5) -> fc2 (3 classes).
  // Odd sizes on the way make the second pool drop a row and a column, whose gradient must be exactly 0.
  const CnnSpec spec{.height = 6, .width = 6, .channels = 2, .conv_filters = {3, 4}, .kernel_size = 3,
                     .hidden = {5}, .num_classes = 3, .activation = GetParam(), .max_batch = 4};
  auto model = make_cnn(*backend_, spec);
  model->initialize(3);
  const std::size_t batch = 3;
  testing::GradientCheck check(*model, random_floats(batch * model->input_size(), 42, -1.0f, 1.0f), {0, 2, 1});
  const std::vector<float>& gradients = check.gradients();
  auto tolerance = [](double numeric) { return 5e-4 + 1e-2 * std::abs(numeric); };

  for (const ParameterInfo& info : model->parameters()) {
    double largest_gradient = 0;
    for (std::size_t i = info.offset; i < info.offset + info.size; ++i) {
      double numeric = check.central_difference(i, 1e-3f);
      // A max-pool switching its argmax (or a relu crossing 0) within the step makes the loss kinked there and
      // spoils the difference; a step 4x smaller that stays clear of the kink decides.
      if (std::abs(gradients[i] - numeric) > tolerance(numeric)) numeric = check.central_difference(i, 2.5e-4f);
      EXPECT_NEAR(gradients[i], numeric, tolerance(numeric)) << info.name << " element " << i - info.offset;
      largest_gradient = std::max(largest_gradient, std::abs(numeric));
    }
    EXPECT_GT(largest_gradient, 1e-4) << info.name;  // the check is meaningless if every gradient is ~0
  }
}

INSTANTIATE_TEST_SUITE_P(All, CnnGradientTest,
                         ::testing::Values(Activation::kRelu, Activation::kTanh, Activation::kSigmoid),
                         [](const auto& info) { return compute::to_string(info.param); });

}  // namespace
}  // namespace pstrain::nn
