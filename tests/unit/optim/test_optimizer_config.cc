// make_optimizer rejects configurations a user can type, naming the flag at fault.
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "core/error.h"
#include "optim/optimizer.h"

namespace pstrain::optim {
namespace {

struct BadConfig {
  OptimizerConfig config;
  std::string expected_text;
};

// Keeps test listings readable (gtest would otherwise print the struct's bytes).
void PrintTo(const BadConfig& bad, std::ostream* out) {
  *out << bad.config.kind << ": " << bad.expected_text;
}

class BadConfigTest : public ::testing::TestWithParam<BadConfig> {};

TEST_P(BadConfigTest, IsAUsageErrorNamingTheProblem) {
  try {
    make_optimizer(GetParam().config, 4);
    FAIL() << "expected an error for " << GetParam().expected_text;
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kUsage);
    EXPECT_NE(std::string(error.what()).find(GetParam().expected_text), std::string::npos) << error.what();
  }
}

// Built field by field from the defaults: each case breaks exactly one setting.
std::vector<BadConfig> bad_configs() {
  constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
  constexpr float kInfinity = std::numeric_limits<float>::infinity();
  std::vector<BadConfig> cases;
  auto add = [&](const std::string& kind, auto&& breaks, const std::string& expected_text) {
    OptimizerConfig config;
    config.kind = kind;
    breaks(config);
    cases.push_back({config, expected_text});
  };
  add(
      "rmsprop", [](OptimizerConfig&) {}, "unknown optimizer 'rmsprop'");
  for (float lr : {0.0f, -0.1f, kNan, kInfinity})
    add(
        "sgd", [=](auto& c) { c.learning_rate = lr; }, "--lr");
  for (float mu : {1.0f, -0.1f, kNan})
    add(
        "momentum", [=](auto& c) { c.momentum = mu; }, "--momentum");
  for (float wd : {-1e-4f, kInfinity, kNan})
    add(
        "sgd", [=](auto& c) { c.weight_decay = wd; }, "--weight-decay");
  add(
      "adam", [](auto& c) { c.beta1 = 1.0f; }, "beta1");
  add(
      "adam", [](auto& c) { c.beta2 = -0.5f; }, "beta2");
  add(
      "adam", [](auto& c) { c.epsilon = 0.0f; }, "epsilon");
  return cases;
}

INSTANTIATE_TEST_SUITE_P(All, BadConfigTest, ::testing::ValuesIn(bad_configs()));

TEST(GoodConfig, EveryKindIsBuilt) {
  for (const std::string kind : {"sgd", "momentum", "adam"}) {
    const auto optimizer = make_optimizer({.kind = kind, .momentum = 0.0f, .weight_decay = 0.0f}, 3);
    EXPECT_EQ(optimizer->name(), kind);
    EXPECT_EQ(optimizer->steps_taken(), 0u);
  }
}

}  // namespace
}  // namespace pstrain::optim
