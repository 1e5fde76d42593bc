// The MLP's contract apart from gradient values: parameter layout, deterministic initialisation, batch limits,
// and which calls may touch the gradients.
#include <cmath>

#include "backend_test_util.h"
#include "core/error.h"
#include "model_test_util.h"
#include "nn/initialization.h"
#include "nn/model.h"

namespace pstrain::nn {
namespace {

using compute::Activation;
using compute::testing::random_floats;
using testing::parameters_of;

const MlpSpec kFashionSpec{.input_size = 784,
                           .hidden = {256, 128},
                           .num_classes = 10,
                           .activation = Activation::kRelu,
                           .max_batch = 64};

class MlpModelTest : public compute::testing::BackendTest {};

TEST_F(MlpModelTest, ParameterLayoutIsFcWeightThenBiasInLayerOrder) {
  auto model = make_mlp(*backend_, kFashionSpec);
  testing::expect_packed_layout(*model, {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "fc3.weight", "fc3.bias"},
                                {{256, 784}, {256}, {128, 256}, {128}, {10, 128}, {10}});
  EXPECT_EQ(model->parameter_count(), 235146u);
  EXPECT_EQ(model->input_size(), 784u);
  EXPECT_EQ(model->num_classes(), 10u);
}

TEST_F(MlpModelTest, NoHiddenLayersIsLogisticRegression) {
  auto model = make_mlp(*backend_, {.input_size = 3, .hidden = {}, .num_classes = 2});
  ASSERT_EQ(model->parameters().size(), 2u);
  EXPECT_EQ(model->parameters()[0].name, "fc1.weight");
  EXPECT_EQ(model->parameter_count(), 8u);
  model->initialize(1);
  const std::vector<float> features{0.1f, 0.2f, 0.3f};
  const std::vector<std::int32_t> labels{1};
  EXPECT_TRUE(std::isfinite(model->train_batch(features, labels, 1).loss_sum));
}

TEST_F(MlpModelTest, InitializationIsDeterministicFromTheSeed) {
  testing::expect_initialization_deterministic(*make_mlp(*backend_, kFashionSpec), *make_mlp(*backend_, kFashionSpec));
}

TEST_F(MlpModelTest, InitializationMatchesTheDocumentedRecipe) {
  const MlpSpec spec{.input_size = 3, .hidden = {2}, .num_classes = 2, .activation = Activation::kTanh};
  auto model = make_mlp(*backend_, spec);
  model->initialize(7);
  testing::RecipeParameters expected(7);
  expected.add_layer(6, std::sqrt(6.0 / (3 + 2)), 2);  // fc1, Glorot
  expected.add_layer(4, std::sqrt(6.0 / (2 + 2)), 2);  // fc2
  EXPECT_EQ(parameters_of(*model), expected.values());
  EXPECT_EQ(unit_float(0), 0.0f);
  EXPECT_EQ(unit_float(~std::uint64_t{0}), 1.0f - 1.0f / 16777216.0f);
}

TEST_F(MlpModelTest, WeightsSpanTheirLimitAndBiasesStartAtZero) {
  for (Activation activation : {Activation::kRelu, Activation::kTanh, Activation::kSigmoid}) {
    MlpSpec spec = kFashionSpec;
    spec.activation = activation;
    auto model = make_mlp(*backend_, spec);
    model->initialize(5);
    testing::expect_weights_span_their_limit(*model, [&](const ParameterInfo& info) {
      const double fan_in = static_cast<double>(info.shape[1]);
      const double fan_out = static_cast<double>(info.shape[0]);
      return activation == Activation::kRelu ? std::sqrt(6 / fan_in) : std::sqrt(6 / (fan_in + fan_out));
    });
  }
}

TEST_F(MlpModelTest, SetParametersRoundTrips) {
  auto model = make_mlp(*backend_, {.input_size = 4, .hidden = {3}, .num_classes = 2});
  const auto values = random_floats(model->parameter_count(), 51);
  model->set_parameters(values);
  EXPECT_EQ(parameters_of(*model), values);
}

TEST_F(MlpModelTest, BatchLargerThanMaxBatchIsAUsageError) {
  auto model = make_mlp(*backend_, {.input_size = 2, .hidden = {3}, .num_classes = 2, .max_batch = 4});
  model->initialize(1);
  testing::expect_oversized_batch_is_a_usage_error(*model, 4);
}

TEST_F(MlpModelTest, MismatchedSpanSizesAreInternalErrors) {
  auto model = make_mlp(*backend_, {.input_size = 2, .hidden = {3}, .num_classes = 2});
  std::vector<float> too_short(model->parameter_count() - 1);
  EXPECT_THROW(model->get_parameters(too_short), Error);
  const std::vector<float> features(3, 0.5f);  // 1.5 samples
  const std::vector<std::int32_t> labels(2, 0);
  EXPECT_THROW(model->train_batch(features, labels, 2), Error);
}

TEST_F(MlpModelTest, InvalidSpecsAreUsageErrors) {
  const std::vector<MlpSpec> bad{{.input_size = 0, .hidden = {}, .num_classes = 2},
                                 {.input_size = 3, .hidden = {4, 0}, .num_classes = 2},
                                 {.input_size = 3, .hidden = {}, .num_classes = 1},
                                 {.input_size = 3, .hidden = {}, .num_classes = 2, .max_batch = 0}};
  for (const MlpSpec& spec : bad) {
    try {
      make_mlp(*backend_, spec);
      FAIL() << "expected an error";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ExitCode::kUsage);
    }
  }
}

TEST_F(MlpModelTest, EvaluateMatchesTrainAndLeavesGradientsAlone) {
  auto model = make_mlp(*backend_, {.input_size = 6, .hidden = {5}, .num_classes = 3, .max_batch = 8});
  model->initialize(9);
  testing::expect_evaluate_matches_train_and_leaves_gradients_alone(*model);
}

TEST_F(MlpModelTest, GradientStepsReduceTheLoss) {
  // Two separable clusters; plain gradient descent on the flat vector must fit them.
  auto model = make_mlp(*backend_, {.input_size = 4, .hidden = {8}, .num_classes = 2, .max_batch = 16});
  model->initialize(11);
  std::vector<float> features;
  std::vector<std::int32_t> labels;
  const auto noise = random_floats(16 * 4, 71, -0.2f, 0.2f);
  for (int i = 0; i < 16; ++i) {
    const int label = i % 2;
    for (int j = 0; j < 4; ++j) features.push_back((label == 0 ? 0.2f : 0.8f) + noise[i * 4 + j]);
    labels.push_back(label);
  }
  auto parameters = parameters_of(*model);
  std::vector<float> gradients(parameters.size());
  const double initial = model->train_batch(features, labels, 16).loss_sum;
  BatchResult last;
  for (int step = 0; step < 200; ++step) {
    last = model->train_batch(features, labels, 16);
    model->get_gradients(gradients);
    for (std::size_t i = 0; i < parameters.size(); ++i) parameters[i] -= 0.5f * gradients[i];
    model->set_parameters(parameters);
  }
  EXPECT_LT(last.loss_sum, 0.2 * initial);
  EXPECT_EQ(last.correct, 16u);
}

}  // namespace
}  // namespace pstrain::nn
