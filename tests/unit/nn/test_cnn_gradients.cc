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
  const CnnSpec spec{.height = 6,
                     .width = 6,
                     .channels = 2,
                     .conv_filters = {3, 4},
                     .kernel_size = 3,
                     .hidden = {5},
                     .num_classes = 3,
                     .activation = GetParam(),
                     .max_batch = 4};
  auto model = make_cnn(*backend_, spec);
  model->initialize(3);
  const std::size_t batch = 3;
  testing::GradientCheck check(*model, random_floats(batch * model->input_size(), 42, -1.0f, 1.0f), {0, 2, 1});
  testing::expect_gradients_match_finite_differences(*model, check);
}

INSTANTIATE_TEST_SUITE_P(All, CnnGradientTest,
                         ::testing::Values(Activation::kRelu, Activation::kTanh, Activation::kSigmoid),
                         [](const auto& info) { return compute::to_string(info.param); });

}  // namespace
}  // namespace pstrain::nn
