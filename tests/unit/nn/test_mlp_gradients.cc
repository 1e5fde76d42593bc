// Every parameter gradient of a small MLP against central finite differences of the mean batch loss, for each
// activation. The loss is summed in double by the backend, so fp32 logits with a 1e-3 step leave the
// difference accurate to about 1e-4.
#include <cmath>

#include "backend_test_util.h"
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
  std::vector<float> parameters(model->parameter_count());
  model->get_parameters(parameters);
  // Non-zero biases so that the bias path is exercised beyond its zero initialisation.
  for (const ParameterInfo& info : model->parameters()) {
    if (info.shape.size() == 1) {
      const auto biases = random_floats(info.size, 41, -0.3f, 0.3f);
      std::copy(biases.begin(), biases.end(), parameters.begin() + static_cast<std::ptrdiff_t>(info.offset));
    }
  }
  model->set_parameters(parameters);

  const std::size_t batch = 5;
  const auto features = random_floats(batch * spec.input_size, 42, 0.0f, 1.0f);
  const std::vector<std::int32_t> labels{0, 2, 1, 1, 0};

  const BatchResult trained = model->train_batch(features, labels, batch);
  EXPECT_EQ(trained.count, batch);
  std::vector<float> gradients(model->parameter_count());
  model->get_gradients(gradients);

  auto mean_loss = [&](const std::vector<float>& values) {
    model->set_parameters(values);
    return model->evaluate_batch(features, labels, batch).loss_sum / static_cast<double>(batch);
  };
  EXPECT_NEAR(mean_loss(parameters), trained.loss_sum / batch, 1e-6);

  constexpr float kStep = 1e-3f;
  double largest_gradient = 0;
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    auto shifted = parameters;
    shifted[i] = parameters[i] + kStep;
    const double plus = mean_loss(shifted);
    shifted[i] = parameters[i] - kStep;
    const double minus = mean_loss(shifted);
    // Divide by the step actually taken: parameters[i] +- kStep rounds in fp32.
    const double step = static_cast<double>(parameters[i] + kStep) - static_cast<double>(parameters[i] - kStep);
    const double numeric = (plus - minus) / step;
    EXPECT_NEAR(gradients[i], numeric, 5e-4 + 1e-2 * std::abs(numeric)) << "parameter " << i;
    largest_gradient = std::max(largest_gradient, std::abs(numeric));
  }
  EXPECT_GT(largest_gradient, 1e-2);  // the check is meaningless if every gradient is ~0
}

INSTANTIATE_TEST_SUITE_P(All, MlpGradientTest,
                         ::testing::Values(Activation::kRelu, Activation::kTanh, Activation::kSigmoid),
                         [](const auto& info) { return compute::to_string(info.param); });

}  // namespace
}  // namespace pstrain::nn
