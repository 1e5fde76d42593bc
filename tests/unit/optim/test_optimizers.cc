// Each optimizer's update against values worked out by hand from the formulas in optimizer.h, over several
// steps so that state (velocity, moments, step count) is exercised.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "optim/optimizer.h"

namespace pstrain::optim {
namespace {

constexpr double kTolerance = 1e-6;

void expect_parameters(const std::vector<float>& actual, const std::vector<double>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) EXPECT_NEAR(actual[i], expected[i], kTolerance) << "index " << i;
}

TEST(Sgd, StepsWithWeightDecay) {
  const auto optimizer = make_optimizer({.kind = "sgd", .learning_rate = 0.1f, .weight_decay = 0.01f}, 2);
  std::vector<float> w{1.0f, -2.0f};
  const std::vector<float> g{0.5f, 0.25f};

  // step 1: g' = g + 0.01 w = {0.51, 0.23};  w = w - 0.1 g' = {0.949, -2.023}
  optimizer->step(w, g);
  expect_parameters(w, {0.949, -2.023});
  // step 2: g' = {0.5 + 0.00949, 0.25 - 0.02023} = {0.50949, 0.22977};  w = {0.898051, -2.045977}
  optimizer->step(w, g);
  expect_parameters(w, {0.898051, -2.045977});
  EXPECT_EQ(optimizer->steps_taken(), 2u);
  EXPECT_TRUE(optimizer->state().empty());
  EXPECT_EQ(optimizer->name(), "sgd");
}

TEST(Momentum, AccumulatesVelocity) {
  const auto optimizer =
      make_optimizer({.kind = "momentum", .learning_rate = 0.1f, .momentum = 0.9f, .weight_decay = 0.1f}, 1);
  std::vector<float> w{1.0f};

  // step 1: g' = 1 + 0.1*1 = 1.1;          v = 1.1;                  w = 1 - 0.11 = 0.89
  optimizer->step(w, std::vector<float>{1.0f});
  expect_parameters(w, {0.89});
  // step 2: g' = -0.5 + 0.089 = -0.411;    v = 0.99 - 0.411 = 0.579; w = 0.89 - 0.0579 = 0.8321
  optimizer->step(w, std::vector<float>{-0.5f});
  expect_parameters(w, {0.8321});
  // step 3: g' = 0 + 0.08321 = 0.08321;    v = 0.5211 + 0.08321 = 0.60431; w = 0.8321 - 0.060431 = 0.771669
  optimizer->step(w, std::vector<float>{0.0f});
  expect_parameters(w, {0.771669});

  const auto state = optimizer->state();
  ASSERT_EQ(state.size(), 1u);
  EXPECT_EQ(state[0].first, "velocity");
  EXPECT_NEAR((*state[0].second)[0], 0.60431, kTolerance);
}

TEST(Adam, AppliesBiasCorrection) {
  const OptimizerConfig config{.kind = "adam",
                               .learning_rate = 0.01f,
                               .weight_decay = 0.0f,
                               .beta1 = 0.9f,
                               .beta2 = 0.999f,
                               .epsilon = 1e-8f};
  const auto optimizer = make_optimizer(config, 2);
  std::vector<float> w{0.5f, -0.5f};

  // step 1: m = 0.1 g, v = 0.001 g^2; the corrections 1/(1-0.9) and 1/(1-0.999) give m_hat = g, v_hat = g^2,
  // so each weight moves by lr * g / (|g| + eps) = 0.01 * sign(g) (up to eps).
  optimizer->step(w, std::vector<float>{0.2f, -4.0f});
  expect_parameters(w, {0.49, -0.49});

  // step 2, g = {0.1, 1.0}:
  //   m = 0.9 m + 0.1 g = {0.018 + 0.01, -0.36 + 0.1} = {0.028, -0.26};      m_hat = m / 0.19
  //   v = 0.999 v + 0.001 g^2 = {0.00003996 + 0.00001, 0.015984 + 0.001};    v_hat = v / 0.001999
  //   w -= 0.01 * m_hat / sqrt(v_hat)
  optimizer->step(w, std::vector<float>{0.1f, 1.0f});
  const double m_hat0 = 0.028 / 0.19, v_hat0 = 0.00004996 / 0.001999;
  const double m_hat1 = -0.26 / 0.19, v_hat1 = 0.016984 / 0.001999;
  expect_parameters(w, {0.49 - 0.01 * m_hat0 / (std::sqrt(v_hat0) + 1e-8),  // ≈ 0.480678
                        -0.49 - 0.01 * m_hat1 / (std::sqrt(v_hat1) + 1e-8)});
  EXPECT_EQ(optimizer->steps_taken(), 2u);

  const auto state = optimizer->state();
  ASSERT_EQ(state.size(), 2u);
  EXPECT_EQ(state[0].first, "m");
  EXPECT_EQ(state[1].first, "v");
  EXPECT_NEAR((*state[0].second)[1], -0.26, kTolerance);
  EXPECT_NEAR((*state[1].second)[1], 0.016984, kTolerance);
}

// The update loop is written to vectorise; it must still compute, element by element, the formula of
// optimizer.h in the order written there (the scalar form it replaced), so that trained parameters keep their
// bits. 1,003 elements (a vector tail), weight decay with a mask leaving some elements out, several steps.
TEST(Adam, VectorisedLoopEqualsTheScalarFormulaBitForBit) {
  const OptimizerConfig config{.kind = "adam", .learning_rate = 0.003f, .weight_decay = 0.01f};
  constexpr std::size_t n = 1003;
  std::vector<std::uint8_t> mask(n);
  std::vector<float> w(n), reference_w(n), m(n, 0.0f), v(n, 0.0f);
  for (std::size_t i = 0; i < n; ++i) {
    mask[i] = i % 7 != 0;
    w[i] = reference_w[i] = std::sin(0.37f * static_cast<float>(i));
  }
  const auto optimizer = make_optimizer(config, n, mask);
  for (int t = 1; t <= 5; ++t) {
    std::vector<float> g(n);
    for (std::size_t i = 0; i < n; ++i) g[i] = std::cos(0.11f * static_cast<float>(i * t)) * 0.5f;
    optimizer->step(w, g);
    const auto c1 = static_cast<float>(1.0 / (1.0 - std::pow(static_cast<double>(config.beta1), t)));
    const auto c2 = static_cast<float>(1.0 / (1.0 - std::pow(static_cast<double>(config.beta2), t)));
    for (std::size_t i = 0; i < n; ++i) {
      volatile float decay = mask[i] ? config.weight_decay : 0.0f;  // volatile: kept scalar
      const float gradient = g[i] + decay * reference_w[i];
      m[i] = config.beta1 * m[i] + (1.0f - config.beta1) * gradient;
      v[i] = config.beta2 * v[i] + (1.0f - config.beta2) * gradient * gradient;
      const float m_hat = m[i] * c1;
      const float v_hat = v[i] * c2;
      reference_w[i] -= config.learning_rate * m_hat / (std::sqrt(v_hat) + config.epsilon);
    }
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(w[i], reference_w[i]) << "step " << t << " element " << i;
  }
}

TEST(Adam, WeightDecayEntersTheGradient) {
  const auto optimizer = make_optimizer({.kind = "adam", .learning_rate = 0.1f, .weight_decay = 0.5f}, 1);
  std::vector<float> w{2.0f};
  // g' = 0 + 0.5 * 2 = 1 > 0, so the first (bias-corrected) step moves w down by lr.
  optimizer->step(w, std::vector<float>{0.0f});
  expect_parameters(w, {1.9});
}

TEST(Adam, RestoredStateContinuesExactly) {
  // A checkpoint holds the moments and the step count; restoring both must reproduce the uninterrupted run,
  // which depends on the step count through the bias correction.
  const OptimizerConfig config{.kind = "adam", .learning_rate = 0.05f};
  const std::vector<std::vector<float>> gradients{{0.3f, -1.0f}, {0.2f, 0.5f}, {-0.7f, 0.1f}};
  const auto uninterrupted = make_optimizer(config, 2);
  const auto first_half = make_optimizer(config, 2);
  std::vector<float> w_uninterrupted{1.0f, 2.0f};
  std::vector<float> w_resumed = w_uninterrupted;
  for (const auto& g : gradients) uninterrupted->step(w_uninterrupted, g);
  for (int i = 0; i < 2; ++i) first_half->step(w_resumed, gradients[i]);

  const auto resumed = make_optimizer(config, 2);
  const auto saved = first_half->state();
  const auto restored = resumed->state();
  for (std::size_t i = 0; i < saved.size(); ++i) *restored[i].second = *saved[i].second;
  resumed->set_steps_taken(first_half->steps_taken());
  resumed->step(w_resumed, gradients[2]);
  EXPECT_EQ(w_resumed, w_uninterrupted);
  EXPECT_EQ(resumed->steps_taken(), 3u);
}

TEST(Optimizer, SizeMismatchIsAnInternalError) {
  const auto optimizer = make_optimizer({.kind = "momentum"}, 3);
  std::vector<float> w(2);
  try {
    optimizer->step(w, std::vector<float>(2));
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kInternal);
  }
}

// Nesterov (PyTorch's nesterov=True): v = mu v + g';  w -= lr (g' + mu v), by hand for three steps.
TEST(Nesterov, LooksAheadAlongTheVelocity) {
  OptimizerConfig config{.kind = "momentum", .learning_rate = 0.1f, .momentum = 0.9f};
  config.nesterov = true;
  const auto optimizer = make_optimizer(config, 1);
  std::vector<float> w{1.0f};
  // step 1: v = 1;                 w = 1 - 0.1 (1 + 0.9)            = 0.81
  optimizer->step(w, std::vector<float>{1.0f});
  expect_parameters(w, {0.81});
  // step 2: v = 0.9 - 0.5 = 0.4;   w = 0.81 - 0.1 (-0.5 + 0.36)     = 0.824
  optimizer->step(w, std::vector<float>{-0.5f});
  expect_parameters(w, {0.824});
  // step 3: v = 0.36;              w = 0.824 - 0.1 (0 + 0.324)      = 0.7916
  optimizer->step(w, std::vector<float>{0.0f});
  expect_parameters(w, {0.7916});
  ASSERT_EQ(optimizer->state().size(), 1u);
  EXPECT_EQ(optimizer->state()[0].first, "velocity");  // the same checkpoint name as plain momentum
  EXPECT_NEAR((*optimizer->state()[0].second)[0], 0.36, kTolerance);
}

// Against a reference written out in double from PyTorch's SGD(nesterov=True, weight_decay=wd) algorithm, over
// several elements and steps, with a decay mask leaving element 1 undecayed.
TEST(Nesterov, MatchesAReferenceWithWeightDecayAndAMask) {
  OptimizerConfig config{.kind = "momentum", .learning_rate = 0.05f, .momentum = 0.8f, .weight_decay = 0.1f};
  config.nesterov = true;
  const std::vector<std::uint8_t> mask{1, 0, 1};
  const auto optimizer = make_optimizer(config, 3, mask);
  std::vector<float> w{0.5f, -1.0f, 2.0f};
  std::vector<double> w_ref{0.5, -1.0, 2.0};
  std::vector<double> v_ref(3, 0.0);
  const std::vector<std::vector<float>> gradients{{0.3f, -0.2f, 1.0f}, {-0.1f, 0.4f, 0.5f}, {0.2f, 0.2f, -0.3f}};
  for (const auto& g : gradients) {
    optimizer->step(w, g);
    for (std::size_t i = 0; i < 3; ++i) {
      const double d_p = g[i] + (mask[i] ? 0.1 : 0.0) * w_ref[i];  // d_p = d_p.add(p, alpha=weight_decay)
      v_ref[i] = 0.8 * v_ref[i] + d_p;                             // buf.mul_(momentum).add_(d_p)
      w_ref[i] -= 0.05 * (d_p + 0.8 * v_ref[i]);                   // d_p = d_p.add(buf, alpha=momentum)
    }
    for (std::size_t i = 0; i < 3; ++i) EXPECT_NEAR(w[i], w_ref[i], 1e-6) << "element " << i;
  }
}

TEST(DecayMask, OnlyMarkedElementsDecayInEveryOptimizer) {
  const std::vector<std::uint8_t> mask{1, 0};
  for (const std::string kind : {"sgd", "momentum", "adam"}) {
    OptimizerConfig config{.kind = kind, .learning_rate = 0.1f, .weight_decay = 0.5f};
    const auto masked = make_optimizer(config, 2, mask);
    config.weight_decay = 0.0f;
    const auto undecayed = make_optimizer(config, 1);
    config.weight_decay = 0.5f;
    const auto decayed = make_optimizer(config, 1);
    std::vector<float> w{1.0f, 1.0f};
    std::vector<float> w_decayed{1.0f};
    std::vector<float> w_undecayed{1.0f};
    for (int step = 0; step < 3; ++step) {
      masked->step(w, std::vector<float>{0.25f, 0.25f});
      decayed->step(w_decayed, std::vector<float>{0.25f});
      undecayed->step(w_undecayed, std::vector<float>{0.25f});
    }
    EXPECT_EQ(w[0], w_decayed[0]) << kind;  // bit for bit: the mask's 1 is the plain weight decay
    EXPECT_EQ(w[1], w_undecayed[0]) << kind;
    EXPECT_NE(w_decayed[0], w_undecayed[0]) << kind;  // the test can tell the two apart
  }
}

TEST(DecayMask, TheRuleIsANameEndingInWeight) {
  EXPECT_TRUE(decays("fc1.weight"));
  EXPECT_TRUE(decays("block2.conv1.weight"));
  EXPECT_FALSE(decays("fc1.bias"));
  EXPECT_FALSE(decays("bn1.gamma"));
  EXPECT_FALSE(decays("bn1.beta"));
  EXPECT_FALSE(decays("weight"));
  EXPECT_FALSE(decays("fc1.weights"));
}

TEST(DecayMask, OfTheWrongLengthIsAnInternalError) {
  try {
    make_optimizer({.kind = "sgd"}, 3, std::vector<std::uint8_t>{1, 0});
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kInternal);
  }
}

TEST(Adagrad, DividesByTheRootOfTheSummedSquaredGradients) {
  const auto optimizer = make_optimizer({.kind = "adagrad", .learning_rate = 0.1f}, 2);
  std::vector<float> w{1.0f, -1.0f};
  // step 1: s = g^2, so each weight moves by lr * g / |g| = 0.1 * sign(g) (PyTorch's first Adagrad step).
  optimizer->step(w, std::vector<float>{3.0f, -0.5f});
  EXPECT_NEAR(w[0], 0.9, 1e-6);
  EXPECT_NEAR(w[1], -0.9, 1e-6);
  // step 2, g = {4, 0}: s = {9 + 16, 0.25}; w0 -= 0.1 * 4 / 5; w1 does not move.
  optimizer->step(w, std::vector<float>{4.0f, 0.0f});
  EXPECT_NEAR(w[0], 0.9 - 0.08, 1e-6);
  EXPECT_NEAR(w[1], -0.9, 1e-6);
  const auto state = optimizer->state();
  ASSERT_EQ(state.size(), 1u);
  EXPECT_EQ(state[0].first, "sum");
  EXPECT_NEAR((*state[0].second)[0], 25.0, 1e-5);
}

}  // namespace
}  // namespace pstrain::optim
