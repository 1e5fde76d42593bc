#include <gtest/gtest.h>

#include "core/error.h"
#include "test_hooks.h"

namespace pstrain::faults {
namespace {

TEST(TestHooks, EmptyTextLeavesEveryHookOff) {
  const TestHooks hooks = parse_test_hooks("");
  EXPECT_EQ(hooks.step_delay_ms, 0);
  EXPECT_EQ(hooks.slow_trainer, -1);
  EXPECT_EQ(hooks.slow_factor, 1.0);
  EXPECT_EQ(hooks.perturb_replica_step, -1);
  EXPECT_FALSE(hooks.opaque_backend);
  EXPECT_FALSE(hooks.delays(0));
}

TEST(TestHooks, ParsesEveryHookByName) {
  const TestHooks hooks = parse_test_hooks(
      "checkpoint-delay-ms=300,step-delay-ms=50,slow-trainer=1,slow-factor=2.5,leave-delay-ms=60000,"
      "perturb-replica-step=3,opaque-backend=true,ranks-per-node=3");
  EXPECT_EQ(hooks.checkpoint_delay_ms, 300);
  EXPECT_EQ(hooks.step_delay_ms, 50);
  EXPECT_EQ(hooks.slow_trainer, 1);
  EXPECT_EQ(hooks.slow_factor, 2.5);
  EXPECT_EQ(hooks.leave_delay_ms, 60000);
  EXPECT_EQ(hooks.perturb_replica_step, 3);
  EXPECT_TRUE(hooks.opaque_backend);
  EXPECT_EQ(hooks.ranks_per_node, 3);
  EXPECT_EQ(parse_test_hooks("").ranks_per_node, 0);  // the real nodes
}

TEST(TestHooks, StepDelayAppliesToTheNamedTrainerOrToEveryTrainer) {
  EXPECT_TRUE(parse_test_hooks("step-delay-ms=5").delays(3));
  const TestHooks one = parse_test_hooks("step-delay-ms=5,slow-trainer=1");
  EXPECT_TRUE(one.delays(1));
  EXPECT_FALSE(one.delays(0));
}

void expect_refused(const char* text, const char* fragment) {
  try {
    parse_test_hooks(text);
    FAIL() << "accepted " << text;
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kUsage);
    EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << error.what();
  }
}

TEST(TestHooks, MalformedEntriesAreRefusedNamingThem) {
  expect_refused("step-delay=5", "unknown hook 'step-delay'");
  expect_refused("step-delay-ms", "expected name=value");
  expect_refused("step-delay-ms=fast", "needs a number, not 'fast'");
  expect_refused("slow-factor=0.5", "slow-factor must be >= 1");
  expect_refused("opaque-backend=yes", "true or false");
  expect_refused("ranks-per-node=0", "ranks-per-node must be >= 1");
}

}  // namespace
}  // namespace pstrain::faults
