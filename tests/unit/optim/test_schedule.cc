// The learning-rate schedule, and that optimizers follow it.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "optim/optimizer.h"

namespace pstrain::optim {
namespace {

TEST(Schedule, ConstantIgnoresTheUpdateCount) {
  OptimizerConfig config;
  config.learning_rate = 0.3f;
  config.total_updates = 10;
  EXPECT_FLOAT_EQ(scheduled_learning_rate(config, 1), 0.3f);
  EXPECT_FLOAT_EQ(scheduled_learning_rate(config, 10), 0.3f);
}

TEST(Schedule, CosineStartsAtTheRateHalvesHalfwayAndEndsAtZero) {
  OptimizerConfig config;
  config.learning_rate = 0.4f;
  config.schedule = "cosine";
  config.total_updates = 100;
  EXPECT_FLOAT_EQ(scheduled_learning_rate(config, 1), 0.4f);
  EXPECT_NEAR(scheduled_learning_rate(config, 51), 0.2f, 1e-7);
  EXPECT_NEAR(scheduled_learning_rate(config, 26), 0.2 * (1 + std::cos(M_PI * 0.25)), 1e-7);
  EXPECT_NEAR(scheduled_learning_rate(config, 101), 0.0f, 1e-7);
  EXPECT_NEAR(scheduled_learning_rate(config, 500), 0.0f, 1e-7);  // stays at 0 past the end
}

TEST(Schedule, SgdStepUsesTheScheduledRate) {
  OptimizerConfig config;
  config.kind = "sgd";
  config.learning_rate = 1.0f;
  config.schedule = "cosine";
  config.total_updates = 2;
  auto optimizer = make_optimizer(config, 1);
  std::vector<float> w{0.0f};
  const std::vector<float> g{1.0f};
  optimizer->step(w, g);  // rate 1
  EXPECT_FLOAT_EQ(w[0], -1.0f);
  optimizer->step(w, g);  // rate 0.5 * (1 + cos(pi / 2)) = 0.5
  EXPECT_FLOAT_EQ(w[0], -1.5f);
  optimizer->step(w, g);  // rate 0
  EXPECT_FLOAT_EQ(w[0], -1.5f);
}

TEST(Schedule, UnknownScheduleIsAUsageError) {
  OptimizerConfig config;
  config.schedule = "linear";
  try {
    make_optimizer(config, 1);
    FAIL();
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kUsage);
    EXPECT_NE(std::string(error.what()).find("--lr-schedule"), std::string::npos);
  }
}

// The seed's PiecewiseLinear([0, 5, 24], [0, max_lr, 0]) with max_lr = 0.4, as --lr 0.4 --lr-points 0,5,24
// --lr-factors 0,1,0, at 10 updates per pass: update u sits at pass (u - 1) / 10.
TEST(Schedule, PiecewiseInterpolatesBetweenPointsInPasses) {
  OptimizerConfig config;
  config.learning_rate = 0.4f;
  config.schedule = "piecewise";
  config.lr_points = {0, 5, 24};
  config.lr_factors = {0, 1, 0};
  config.updates_per_pass = 10;
  config.total_updates = 240;
  EXPECT_FLOAT_EQ(scheduled_learning_rate(config, 1), 0.0f);                // pass 0
  EXPECT_NEAR(scheduled_learning_rate(config, 2), 0.4 * 0.1 / 5, 1e-7);     // pass 0.1: 0.4 * 0.1/5
  EXPECT_NEAR(scheduled_learning_rate(config, 26), 0.2, 1e-7);              // pass 2.5: half way up
  EXPECT_NEAR(scheduled_learning_rate(config, 51), 0.4, 1e-7);              // pass 5: the peak
  EXPECT_NEAR(scheduled_learning_rate(config, 146), 0.2, 1e-7);             // pass 14.5: (24 - 14.5) / 19 = 0.5
  EXPECT_NEAR(scheduled_learning_rate(config, 240), 0.4 * 0.1 / 19, 1e-7);  // pass 23.9
  EXPECT_NEAR(scheduled_learning_rate(config, 241), 0.0, 1e-7);             // pass 24
  EXPECT_NEAR(scheduled_learning_rate(config, 999), 0.0, 1e-7);             // past the last point: its factor
}

TEST(Schedule, PiecewiseHoldsTheEndFactorsOutsideThePoints) {
  OptimizerConfig config;
  config.learning_rate = 0.5f;
  config.schedule = "piecewise";
  config.lr_points = {1, 2};
  config.lr_factors = {2, 3};
  config.updates_per_pass = 4;
  EXPECT_FLOAT_EQ(scheduled_learning_rate(config, 1), 1.0f);   // pass 0, before the first point: 0.5 * 2
  EXPECT_FLOAT_EQ(scheduled_learning_rate(config, 5), 1.0f);   // pass 1
  EXPECT_FLOAT_EQ(scheduled_learning_rate(config, 7), 1.25f);  // pass 1.5: 0.5 * 2.5
  EXPECT_FLOAT_EQ(scheduled_learning_rate(config, 50), 1.5f);  // after the last point: 0.5 * 3
}

TEST(Schedule, StepDecaysEveryStepPasses) {
  OptimizerConfig config;
  config.learning_rate = 1.0f;
  config.schedule = "step";
  config.step_passes = 2;
  config.step_gamma = 0.5;
  config.updates_per_pass = 10;
  EXPECT_FLOAT_EQ(scheduled_learning_rate(config, 1), 1.0f);
  EXPECT_FLOAT_EQ(scheduled_learning_rate(config, 20), 1.0f);  // pass 1.9
  EXPECT_FLOAT_EQ(scheduled_learning_rate(config, 21), 0.5f);  // pass 2: first decay
  EXPECT_FLOAT_EQ(scheduled_learning_rate(config, 40), 0.5f);
  EXPECT_FLOAT_EQ(scheduled_learning_rate(config, 41), 0.25f);  // pass 4
  EXPECT_FLOAT_EQ(scheduled_learning_rate(config, 61), 0.125f);
}

// PyTorch's OneCycleLR shape: initial = lr / 25, final = initial / 1e4, cosine up over the first 30% of the
// progress q = (u - 1) / total, cosine down over the rest: anneal(a, b, x) = b + (a - b) (1 + cos(pi x)) / 2.
TEST(Schedule, OneCycleRisesToThePeakAt30PercentThenFalls) {
  OptimizerConfig config;
  config.learning_rate = 1.0f;
  config.schedule = "onecycle";
  config.total_updates = 100;
  EXPECT_NEAR(scheduled_learning_rate(config, 1), 0.04, 1e-7);                        // q = 0: lr / 25
  EXPECT_NEAR(scheduled_learning_rate(config, 16), 1.0 + (0.04 - 1.0) * 0.5, 1e-6);   // q = 0.15: half way
  EXPECT_NEAR(scheduled_learning_rate(config, 31), 1.0, 1e-7);                        // q = 0.3: the peak
  EXPECT_NEAR(scheduled_learning_rate(config, 66), 4e-6 + (1.0 - 4e-6) * 0.5, 1e-6);  // q = 0.65: half way down
  EXPECT_NEAR(scheduled_learning_rate(config, 101), 4e-6, 1e-9);                      // q = 1: lr / 25 / 1e4
  EXPECT_NEAR(scheduled_learning_rate(config, 300), 4e-6, 1e-9);                      // and there it stays
}

TEST(Schedule, WarmupRampsLinearlyThenLeavesTheScheduleAlone) {
  OptimizerConfig config;
  config.learning_rate = 0.6f;
  config.warmup_passes = 2;
  config.updates_per_pass = 5;  // 10 warm-up updates
  EXPECT_NEAR(scheduled_learning_rate(config, 1), 0.06, 1e-7);
  EXPECT_NEAR(scheduled_learning_rate(config, 5), 0.3, 1e-7);
  EXPECT_NEAR(scheduled_learning_rate(config, 10), 0.6, 1e-7);
  EXPECT_NEAR(scheduled_learning_rate(config, 11), 0.6, 1e-7);
  // On top of step decay: the factor multiplies what the schedule gives.
  config.schedule = "step";
  config.step_passes = 1;
  config.step_gamma = 0.5;
  EXPECT_NEAR(scheduled_learning_rate(config, 6), 0.6 * 0.5 * 0.6, 1e-7);  // pass 1 (decayed once), warm-up 6/10
  EXPECT_NEAR(scheduled_learning_rate(config, 11), 0.6 * 0.25, 1e-7);      // pass 2, warm-up over
}

TEST(Schedule, MomentumStepFollowsThePiecewiseRate) {
  OptimizerConfig config;
  config.kind = "momentum";
  config.momentum = 0.5f;
  config.learning_rate = 1.0f;
  config.schedule = "piecewise";
  config.lr_points = {0, 1};
  config.lr_factors = {0, 1};
  config.updates_per_pass = 2;
  auto optimizer = make_optimizer(config, 1);
  std::vector<float> w{0.0f};
  const std::vector<float> g{1.0f};
  optimizer->step(w, g);  // rate 0: v = 1, w stays
  EXPECT_FLOAT_EQ(w[0], 0.0f);
  optimizer->step(w, g);  // rate 0.5: v = 1.5, w = -0.75
  EXPECT_FLOAT_EQ(w[0], -0.75f);
  optimizer->step(w, g);  // rate 1: v = 1.75, w = -2.5
  EXPECT_FLOAT_EQ(w[0], -2.5f);
}

void expect_usage_error(const OptimizerConfig& config, const std::string& fragment) {
  try {
    make_optimizer(config, 1);
    FAIL() << "accepted a configuration that should fail with " << fragment;
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kUsage);
    EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << error.what();
  }
}

TEST(Schedule, BadScheduleSettingsAreUsageErrors) {
  OptimizerConfig piecewise;
  piecewise.schedule = "piecewise";
  piecewise.lr_points = {0, 5, 24};
  piecewise.lr_factors = {0, 1, 0};
  make_optimizer(piecewise, 1);  // the valid one

  OptimizerConfig bad = piecewise;
  bad.lr_points = {0, 5, 5};
  expect_usage_error(bad, "strictly increasing");
  bad.lr_points = {0, 5, 3};
  expect_usage_error(bad, "strictly increasing");
  bad.lr_points = {-1, 5, 24};
  expect_usage_error(bad, ">= 0");
  bad.lr_points = {0, 5};
  expect_usage_error(bad, "one factor per point");
  bad.lr_points = {0};
  bad.lr_factors = {1};
  expect_usage_error(bad, "at least 2");
  bad = piecewise;
  bad.lr_factors = {0, -1, 0};
  expect_usage_error(bad, "--lr-factors");
  bad = piecewise;
  bad.schedule = "cosine";
  expect_usage_error(bad, "need --lr-schedule piecewise");

  OptimizerConfig step;
  step.schedule = "step";
  expect_usage_error(step, "--lr-step-passes");
  step.step_passes = 1;
  step.step_gamma = 0;
  expect_usage_error(step, "--lr-step-gamma");
  step.step_gamma = 1.5;
  expect_usage_error(step, "--lr-step-gamma");

  OptimizerConfig warmup;
  warmup.warmup_passes = -1;
  expect_usage_error(warmup, "--lr-warmup-passes");

  OptimizerConfig nesterov;
  nesterov.kind = "adam";
  nesterov.nesterov = true;
  expect_usage_error(nesterov, "--nesterov");
}

}  // namespace
}  // namespace pstrain::optim
