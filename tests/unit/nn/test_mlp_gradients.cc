// Every parameter gradient of a small MLP against central finite differences of the mean batch loss, for each
// activation. The loss is summed in double by the backend, so fp32 logits with a 1e-3 step leave the
// difference accurate to about 1e-4.
#include <cmath>

#include "backend_test_util.h"
#include "model_test_util.h"
#include "nn/model.h"

namespace pstrain::nn {
namespace {

using compute::Activation;
using compute::testing::random_floats;

class MlpGradientTest : public compute::testing::BackendTest, public ::testing::WithParamInterface<Activation> {};

TEST_P(MlpGradientTest, ParameterGradientsMatchFiniteDifferences) {
  const MlpSpec spec{.input_size = 6, .hidden = {5, 4}, .num_classes = 3, .activation = GetParam(), .max_batch = 8};
  auto model = make_mlp(*backend_, spec);
  model->initialize(3);
  const std::size_t batch = 5;
  testing::GradientCheck check(*model, random_floats(batch * spec.input_size, 42, 0.0f, 1.0f), {0, 2, 1, 1, 0});

  double largest_gradient = 0;
  for (std::size_t i = 0; i < model->parameter_count(); ++i) {
    const double numeric = check.central_difference(i, 1e-3f);
    EXPECT_NEAR(check.gradients()[i], numeric, 5e-4 + 1e-2 * std::abs(numeric)) << "parameter " << i;
    largest_gradient = std::max(largest_gradient, std::abs(numeric));
  }
  EXPECT_GT(largest_gradient, 1e-2);  // the check is meaningless if every gradient is ~0
}

INSTANTIATE_TEST_SUITE_P(All, MlpGradientTest,
                         ::testing::Values(Activation::kRelu, Activation::kTanh, Activation::kSigmoid),
                         [](const auto& info) { return compute::to_string(info.param); });

}  // namespace
}  // namespace pstrain::nn
