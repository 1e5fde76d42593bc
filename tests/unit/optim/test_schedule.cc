// The learning-rate schedule, and that optimizers follow it.
#include <gtest/gtest.h>

#include <cmath>
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

}  // namespace
}  // namespace pstrain::optim
