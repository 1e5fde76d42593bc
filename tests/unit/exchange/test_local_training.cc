// The local (no-exchange) mode: it starts from the initial parameters and runs its optimizer on each step that
// had samples, exactly as the optimizer alone would.
#include <gtest/gtest.h>

#include <vector>

#include "exchange/step_protocol.h"
#include "modes/exchanges.h"
#include "optim/optimizer.h"

namespace pstrain::modes {
namespace {

using exchange::kCheckpointNow;
using exchange::kStopAfterCheckpoint;
using exchange::stops_after_checkpoint;

const optim::OptimizerConfig kMomentum{.kind = "momentum", .learning_rate = 0.1f, .momentum = 0.9f};

TEST(LocalExchange, StartsFromTheInitialParameters) {
  const std::vector<float> initial{1.0f, -2.0f, 0.5f};
  auto local = make_local_exchange(optim::make_optimizer(kMomentum, initial.size()), initial);
  std::vector<float> parameters(initial.size(), 0.0f);
  local->start(parameters);
  EXPECT_EQ(parameters, initial);
}

TEST(LocalExchange, StepsMatchTheOptimizerAloneAndLeaveFlagsAsTheyAre) {
  const std::vector<float> initial{1.0f, -2.0f, 0.5f};
  const std::vector<float> gradient{0.5f, 0.25f, -1.0f};
  auto local = make_local_exchange(optim::make_optimizer(kMomentum, initial.size()), initial);
  auto reference = optim::make_optimizer(kMomentum, initial.size());
  std::vector<float> parameters(initial.size());
  local->start(parameters);
  std::vector<float> expected = initial;
  for (int step = 0; step < 3; ++step) {
    int flags = kCheckpointNow;
    local->step(gradient, 8, {step, 3}, parameters, flags);
    reference->step(expected, gradient);
    EXPECT_EQ(flags, kCheckpointNow);
  }
  EXPECT_EQ(parameters, expected);  // the same operations: the same bits
  EXPECT_EQ(local->own_optimizer()->steps_taken(), 3u);
}

TEST(LocalExchange, AStepWithoutSamplesChangesNothing) {
  const std::vector<float> initial{1.0f, -2.0f};
  auto local = make_local_exchange(optim::make_optimizer(kMomentum, initial.size()), initial);
  std::vector<float> parameters(initial.size());
  local->start(parameters);
  int flags = 0;
  local->step(std::vector<float>{3.0f, 4.0f}, 0, {0, 1}, parameters, flags);
  EXPECT_EQ(parameters, initial);
  EXPECT_EQ(local->own_optimizer()->steps_taken(), 0u);
}

TEST(StepFlags, OnlyTheStopBitStops) {
  EXPECT_FALSE(stops_after_checkpoint(0));
  EXPECT_FALSE(stops_after_checkpoint(kCheckpointNow));
  EXPECT_TRUE(stops_after_checkpoint(kCheckpointNow | kStopAfterCheckpoint));
}

}  // namespace
}  // namespace pstrain::modes
