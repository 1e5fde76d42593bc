#pragma once
// Checks of model.h's contract that hold for every model (MLP, CNN), so that each model's tests state only what
// is its own: the spec, the expected layout, the initialisation limits, the gradient tolerances.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "backend_test_util.h"
#include "core/error.h"
#include "nn/model.h"

namespace pstrain::nn::testing {

inline std::vector<float> parameters_of(const Model& model) {
  std::vector<float> values(model.parameter_count());
  model.get_parameters(values);
  return values;
}

inline std::vector<float> gradients_of(const Model& model) {
  std::vector<float> values(model.parameter_count());
  model.get_gradients(values);
  return values;
}

// The layout is exactly these names and shapes, packed back to back from offset 0.
inline void expect_packed_layout(const Model& model, const std::vector<std::string>& names,
                                 const std::vector<std::vector<std::size_t>>& shapes) {
  const auto& parameters = model.parameters();
  ASSERT_EQ(parameters.size(), names.size());
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
  EXPECT_EQ(model.parameter_count(), offset);
}

// Two fresh models of one spec.
inline void expect_initialization_deterministic(Model& first, Model& second) {
  first.initialize(42);
  second.initialize(42);
  EXPECT_EQ(parameters_of(first), parameters_of(second));
  second.initialize(43);
  EXPECT_NE(parameters_of(first), parameters_of(second));
}

// An independent re-derivation of the documented initialisation, to pin it so that checkpoints and multi-rank
// runs keep agreeing across versions: one mt19937_64 output per weight, its top 24 bits as u in [0, 1),
// weight = (2u - 1) * a; layers in layout order; biases 0, consuming nothing.
class RecipeParameters {
 public:
  explicit RecipeParameters(std::uint64_t seed) : engine_(seed) {}

  void add_layer(std::size_t weights, double limit, std::size_t biases) {
    for (std::size_t i = 0; i < weights; ++i) {
      const double u = static_cast<double>(engine_() >> 40) / 16777216.0;
      values_.push_back(static_cast<float>((2 * u - 1) * static_cast<float>(limit)));
    }
    values_.insert(values_.end(), biases, 0.0f);
  }
  const std::vector<float>& values() const { return values_; }

 private:
  std::mt19937_64 engine_;
  std::vector<float> values_;
};

// After initialize(): biases are 0 and each weight tensor fills (most of) U(-limit, limit).
inline void expect_weights_span_their_limit(const Model& model,
                                            const std::function<double(const ParameterInfo&)>& limit_of) {
  const auto values = parameters_of(model);
  for (const ParameterInfo& info : model.parameters()) {
    const auto begin = values.begin() + static_cast<std::ptrdiff_t>(info.offset);
    const auto end = begin + static_cast<std::ptrdiff_t>(info.size);
    if (info.shape.size() == 1) {
      EXPECT_TRUE(std::all_of(begin, end, [](float v) { return v == 0.0f; })) << info.name;
      continue;
    }
    const double limit = limit_of(info);
    const auto [low, high] = std::minmax_element(begin, end);
    EXPECT_GE(*low, -limit) << info.name;
    EXPECT_LT(*high, limit) << info.name;
    EXPECT_GT(*high, 0.9 * limit) << info.name;  // really uniform over the whole range
    EXPECT_LT(*low, -0.9 * limit) << info.name;
  }
}

// One sample more than max_batch is the user's mistake (kUsage, naming the limit), in training and evaluation.
inline void expect_oversized_batch_is_a_usage_error(Model& model, std::size_t max_batch) {
  const std::size_t count = max_batch + 1;
  const std::vector<float> features(count * model.input_size(), 0.5f);
  const std::vector<std::int32_t> labels(count, 1);
  for (bool training : {true, false}) {
    try {
      training ? model.train_batch(features, labels, count) : model.evaluate_batch(features, labels, count);
      FAIL() << "expected an error";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ExitCode::kUsage);
      EXPECT_NE(std::string(error.what()).find("maximum batch size " + std::to_string(max_batch)), std::string::npos)
          << error.what();
    }
  }
}

// For an initialised model of at least 3 classes and max_batch 8.
inline void expect_evaluate_matches_train_and_leaves_gradients_alone(Model& model) {
  using compute::testing::random_floats;
  const auto features = random_floats(8 * model.input_size(), 61, 0.0f, 1.0f);
  const std::vector<std::int32_t> labels{0, 1, 2, 0, 1, 2, 0, 1};
  const BatchResult trained = model.train_batch(features, labels, 8);
  const auto gradients = gradients_of(model);

  const BatchResult evaluated = model.evaluate_batch(features, labels, 8);
  EXPECT_EQ(evaluated.loss_sum, trained.loss_sum);
  EXPECT_EQ(evaluated.correct, trained.correct);
  EXPECT_EQ(evaluated.count, 8u);

  // A different (smaller) batch through evaluate must not disturb the gradients of the last training step.
  const auto other = random_floats(3 * model.input_size(), 62, 0.0f, 1.0f);
  model.evaluate_batch(other, std::vector<std::int32_t>{2, 2, 2}, 3);
  EXPECT_EQ(gradients_of(model), gradients);

  // Gradients are overwritten by each step, not accumulated.
  model.train_batch(features, labels, 8);
  EXPECT_EQ(gradients_of(model), gradients);
}

// One training step on a fixed batch, and the mean batch loss around its parameters by central differences.
class GradientCheck {
 public:
  // Gives the biases random values first, so that the bias path is exercised beyond its zero initialisation.
  // `training_loss`: differentiate the training-mode loss (batch statistics, dropout masks of the model's step
  // key) instead of evaluation's.
  GradientCheck(Model& model, std::vector<float> features, std::vector<std::int32_t> labels, bool training_loss = false)
      : model_(model),
        features_(std::move(features)),
        labels_(std::move(labels)),
        parameters_(parameters_of(model)),
        training_loss_(training_loss) {
    for (const ParameterInfo& info : model_.parameters()) {
      if (info.shape.size() == 1) {
        const auto biases = compute::testing::random_floats(info.size, 41, -0.3f, 0.3f);
        std::copy(biases.begin(), biases.end(), parameters_.begin() + static_cast<std::ptrdiff_t>(info.offset));
      }
    }
    model_.set_parameters(parameters_);
    const BatchResult trained = model_.train_batch(features_, labels_, labels_.size());
    EXPECT_EQ(trained.count, labels_.size());
    gradients_ = gradients_of(model_);
    EXPECT_NEAR(mean_loss(parameters_), trained.loss_sum / static_cast<double>(labels_.size()), 1e-6);
  }

  const std::vector<float>& gradients() const { return gradients_; }

  double central_difference(std::size_t i, float step) {
    auto shifted = parameters_;
    shifted[i] = parameters_[i] + step;
    const double plus = mean_loss(shifted);
    shifted[i] = parameters_[i] - step;
    const double minus = mean_loss(shifted);
    // Divide by the step actually taken: parameters[i] +- step rounds in fp32.
    return (plus - minus) / (static_cast<double>(parameters_[i] + step) - static_cast<double>(parameters_[i] - step));
  }

 private:
  double mean_loss(const std::vector<float>& values) {
    model_.set_parameters(values);
    const BatchResult result = training_loss_ ? model_.train_batch(features_, labels_, labels_.size())
                                              : model_.evaluate_batch(features_, labels_, labels_.size());
    return result.loss_sum / static_cast<double>(labels_.size());
  }

  Model& model_;
  std::vector<float> features_;
  std::vector<std::int32_t> labels_;
  std::vector<float> parameters_;
  bool training_loss_;
  std::vector<float> gradients_;
};

// Every parameter gradient of `model` against the central difference of `check`'s loss: within 5e-4 + 1e-2
// relative. A max-pool switching its argmax (or a relu crossing 0) within the 1e-3 step makes the loss kinked
// there and spoils the difference; a step 4x smaller that stays clear of the kink decides. Every tensor must have
// some gradient above 1e-4, or the check would be meaningless.
inline void expect_gradients_match_finite_differences(const Model& model, GradientCheck& check) {
  const std::vector<float>& gradients = check.gradients();
  auto tolerance = [](double numeric) { return 5e-4 + 1e-2 * std::abs(numeric); };
  for (const ParameterInfo& info : model.parameters()) {
    double largest_gradient = 0;
    for (std::size_t i = info.offset; i < info.offset + info.size; ++i) {
      double numeric = check.central_difference(i, 1e-3f);
      if (std::abs(gradients[i] - numeric) > tolerance(numeric)) numeric = check.central_difference(i, 2.5e-4f);
      EXPECT_NEAR(gradients[i], numeric, tolerance(numeric)) << info.name << " element " << i - info.offset;
      largest_gradient = std::max(largest_gradient, std::abs(numeric));
    }
    EXPECT_GT(largest_gradient, 1e-4) << info.name;
  }
}

}  // namespace pstrain::nn::testing
