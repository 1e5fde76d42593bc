// The local (no-exchange) mode: it starts from the initial parameters and runs its optimizer on each step that
// had samples, exactly as the optimizer alone would.
#include <gtest/gtest.h>

#include <string>
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

// Two row tables (4 x 3 at float 2, 5 x 2 at float 14) among dense parameters; each step's gradient is zero
// outside the rows it names. Updating only those rows gives the whole step's bits where the optimizer leaves a
// zero gradient's elements as they are (sgd, adagrad without weight decay); elsewhere there is no such capability.
TEST(LocalExchange, UpdatingOnlyTouchedTableRowsGivesTheWholeStepsBits) {
  constexpr std::size_t kSize = 26;
  std::vector<float> initial(kSize);
  for (std::size_t i = 0; i < kSize; ++i) initial[i] = 0.1f * static_cast<float>(i) - 1.0f;
  const std::vector<std::vector<std::uint64_t>> first_rows{{0, 2, 3}, {1}};
  const std::vector<std::vector<std::uint64_t>> second_rows{{1}, {0, 1, 2, 4}};
  for (const std::string kind : {"sgd", "adagrad"}) {
    const optim::OptimizerConfig config{.kind = kind, .learning_rate = 0.1f};
    auto sparse = make_local_exchange(optim::make_optimizer(config, kSize), initial);
    auto whole = make_local_exchange(optim::make_optimizer(config, kSize), initial);
    ASSERT_NE(sparse->touched_row_updates(), nullptr) << kind;
    std::vector<float> sparse_parameters(kSize);
    std::vector<float> whole_parameters(kSize);
    sparse->start(sparse_parameters);
    whole->start(whole_parameters);
    for (int step = 0; step < 4; ++step) {
      const auto& rows = step % 2 == 0 ? first_rows : second_rows;
      std::vector<float> gradient(kSize, 0.0f);
      for (std::size_t i = 0; i < 2; ++i) gradient[i] = 0.5f - static_cast<float>(step);  // dense, before
      for (const std::uint64_t row : rows[0]) {
        for (std::size_t j = 0; j < 3; ++j) gradient[2 + row * 3 + j] = 0.25f * static_cast<float>(row + j + step);
      }
      for (const std::uint64_t row : rows[1]) {
        for (std::size_t j = 0; j < 2; ++j) gradient[14 + row * 2 + j] = -0.5f * static_cast<float>(row + j + 1);
      }
      for (std::size_t i = 24; i < kSize; ++i) gradient[i] = 0.75f;                              // dense, after
      sparse->touched_row_updates()->rows_touched({{14, 2, 10, rows[1]}, {2, 3, 12, rows[0]}});  // any order
      int flags = 0;
      sparse->step(gradient, 8, {step, 4}, sparse_parameters, flags);
      whole->step(gradient, 8, {step, 4}, whole_parameters, flags);
      ASSERT_EQ(sparse_parameters, whole_parameters) << kind << " step " << step;
    }
  }
  for (const optim::OptimizerConfig& config : {kMomentum, optim::OptimizerConfig{.kind = "adam"},
                                               optim::OptimizerConfig{.kind = "sgd", .weight_decay = 0.01f}}) {
    EXPECT_EQ(make_local_exchange(optim::make_optimizer(config, kSize), initial)->touched_row_updates(), nullptr)
        << config.kind;
  }
}

TEST(StepFlags, OnlyTheStopBitStops) {
  EXPECT_FALSE(stops_after_checkpoint(0));
  EXPECT_FALSE(stops_after_checkpoint(kCheckpointNow));
  EXPECT_TRUE(stops_after_checkpoint(kCheckpointNow | kStopAfterCheckpoint));
}

}  // namespace
}  // namespace pstrain::modes
