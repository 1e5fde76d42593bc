// The MLP's contract apart from gradient values: parameter layout, deterministic initialisation, batch limits,
// and which calls may touch the gradients.
#include <algorithm>
#include <cmath>
#include <random>

#include "backend_test_util.h"
#include "core/error.h"
#include "nn/initialization.h"
#include "nn/model.h"

namespace pstrain::nn {
namespace {

using compute::Activation;
using compute::testing::random_floats;

const MlpSpec kFashionSpec{.input_size = 784, .hidden = {256, 128}, .num_classes = 10,
                           .activation = Activation::kRelu, .max_batch = 64};

std::vector<float> parameters_of(Model& model) {
  std::vector<float> values(model.parameter_count());
  model.get_parameters(values);
  return values;
}

std::vector<float> gradients_of(Model& model) {
  std::vector<float> values(model.parameter_count());
  model.get_gradients(values);
  return values;
}

class MlpModelTest : public compute::testing::BackendTest {};

TEST_F(MlpModelTest, ParameterLayoutIsFcWeightThenBiasInLayerOrder) {
  auto model = make_mlp(*backend_, kFashionSpec);
  const auto& parameters = model->parameters();
  ASSERT_EQ(parameters.size(), 6u);
  const std::vector<std::string> names{"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "fc3.weight", "fc3.bias"};
  const std::vector<std::vector<std::size_t>> shapes{{256, 784}, {256}, {128, 256}, {128}, {10, 128}, {10}};
  std::size_t offset = 0;
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    EXPECT_EQ(parameters[i].name, names[i]);
    EXPECT_EQ(parameters[i].shape, shapes[i]);
    EXPECT_EQ(parameters[i].offset, offset);
    std::size_t product = 1;
    for (std::size_t extent : shapes[i]) product *= extent;
    EXPECT_EQ(parameters[i].size, product);
    offset += product;
  }
  EXPECT_EQ(model->parameter_count(), offset);
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
  auto first = make_mlp(*backend_, kFashionSpec);
  auto second = make_mlp(*backend_, kFashionSpec);
  first->initialize(42);
  second->initialize(42);
  EXPECT_EQ(parameters_of(*first), parameters_of(*second));
  second->initialize(43);
  EXPECT_NE(parameters_of(*first), parameters_of(*second));
}

TEST_F(MlpModelTest, InitializationMatchesTheDocumentedRecipe) {
  // Independent re-derivation: one mt19937_64 output per weight, top 24 bits as u in [0, 1), weight =
  // (2u - 1) * a; layers in order, biases consume nothing. Pins the recipe so that checkpoints and
  // multi-rank runs keep agreeing across versions.
  const MlpSpec spec{.input_size = 3, .hidden = {2}, .num_classes = 2, .activation = Activation::kTanh};
  auto model = make_mlp(*backend_, spec);
  model->initialize(7);
  std::mt19937_64 engine(7);
  auto next = [&](double limit) {
    const double u = static_cast<double>(engine() >> 40) / 16777216.0;
    return static_cast<float>((2 * u - 1) * static_cast<float>(limit));
  };
  std::vector<float> expected;
  for (int i = 0; i < 6; ++i) expected.push_back(next(std::sqrt(6.0 / (3 + 2))));  // fc1.weight, Glorot
  expected.insert(expected.end(), 2, 0.0f);                                        // fc1.bias
  for (int i = 0; i < 4; ++i) expected.push_back(next(std::sqrt(6.0 / (2 + 2))));  // fc2.weight
  expected.insert(expected.end(), 2, 0.0f);                                        // fc2.bias
  EXPECT_EQ(parameters_of(*model), expected);
  EXPECT_EQ(unit_float(0), 0.0f);
  EXPECT_EQ(unit_float(~std::uint64_t{0}), 1.0f - 1.0f / 16777216.0f);
}

TEST_F(MlpModelTest, WeightsSpanTheirLimitAndBiasesStartAtZero) {
  for (Activation activation : {Activation::kRelu, Activation::kTanh, Activation::kSigmoid}) {
    MlpSpec spec = kFashionSpec;
    spec.activation = activation;
    auto model = make_mlp(*backend_, spec);
    model->initialize(5);
    const auto values = parameters_of(*model);
    for (const ParameterInfo& info : model->parameters()) {
      const auto begin = values.begin() + static_cast<std::ptrdiff_t>(info.offset);
      const auto end = begin + static_cast<std::ptrdiff_t>(info.size);
      if (info.shape.size() == 1) {
        EXPECT_TRUE(std::all_of(begin, end, [](float v) { return v == 0.0f; })) << info.name;
        continue;
      }
      const double fan_in = static_cast<double>(info.shape[1]);
      const double fan_out = static_cast<double>(info.shape[0]);
      const double limit = activation == Activation::kRelu ? std::sqrt(6 / fan_in) : std::sqrt(6 / (fan_in + fan_out));
      const auto [low, high] = std::minmax_element(begin, end);
      EXPECT_GE(*low, -limit) << info.name;
      EXPECT_LT(*high, limit) << info.name;
      EXPECT_GT(*high, 0.9 * limit) << info.name;  // really uniform over the whole range
      EXPECT_LT(*low, -0.9 * limit) << info.name;
    }
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
  const std::vector<float> features(5 * 2, 0.5f);
  const std::vector<std::int32_t> labels(5, 1);
  for (bool training : {true, false}) {
    try {
      training ? model->train_batch(features, labels, 5) : model->evaluate_batch(features, labels, 5);
      FAIL() << "expected an error";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ExitCode::kUsage);
      EXPECT_NE(std::string(error.what()).find("maximum batch size 4"), std::string::npos) << error.what();
    }
  }
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
  const auto features = random_floats(8 * 6, 61, 0.0f, 1.0f);
  const std::vector<std::int32_t> labels{0, 1, 2, 0, 1, 2, 0, 1};
  const BatchResult trained = model->train_batch(features, labels, 8);
  const auto gradients = gradients_of(*model);

  const BatchResult evaluated = model->evaluate_batch(features, labels, 8);
  EXPECT_EQ(evaluated.loss_sum, trained.loss_sum);
  EXPECT_EQ(evaluated.correct, trained.correct);
  EXPECT_EQ(evaluated.count, 8u);

  // A different (smaller) batch through evaluate must not disturb the gradients of the last training step.
  const auto other = random_floats(3 * 6, 62, 0.0f, 1.0f);
  model->evaluate_batch(other, std::vector<std::int32_t>{2, 2, 2}, 3);
  EXPECT_EQ(gradients_of(*model), gradients);

  // Gradients are overwritten by each step, not accumulated.
  model->train_batch(features, labels, 8);
  EXPECT_EQ(gradients_of(*model), gradients);
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
