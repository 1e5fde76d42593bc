// A server updates its slice block by block as the blocks arrive (optimizer.h: begin_update, update_range): for
// every optimizer, with and without a decay mask, with a schedule, the pieces in any order must give the bits of
// one whole step, step after step (state and step count included).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/counter_random.h"
#include "core/error.h"
#include "optim/optimizer.h"

namespace pstrain::optim {
namespace {

std::vector<float> values(std::size_t size, std::uint64_t key, float scale) {
  std::vector<float> out(size);
  for (std::size_t i = 0; i < size; ++i) out[i] = scale * (counter_uniform(key, i) - 0.5f);
  return out;
}

struct Case {
  std::string name;
  OptimizerConfig config;
  bool masked = false;
};

class UpdateRangeTest : public testing::TestWithParam<Case> {};

TEST_P(UpdateRangeTest, PiecesInAnyOrderGiveTheBitsOfWholeSteps) {
  constexpr std::size_t kSize = 1001;  // odd, so that pieces end inside vector lanes
  std::vector<std::uint8_t> mask;
  if (GetParam().masked) {
    for (std::size_t i = 0; i < kSize; ++i) mask.push_back(i % 3 == 0 ? 0 : 1);
  }
  const auto whole = make_optimizer(GetParam().config, kSize, mask);
  const auto pieces = make_optimizer(GetParam().config, kSize, mask);
  std::vector<float> w_whole = values(kSize, 1, 2.0f);
  std::vector<float> w_pieces = w_whole;
  // Pieces of uneven lengths, updated last to first (the order a backward pass finishes them in).
  const std::vector<std::size_t> cuts{0, 7, 64, 65, 500, 999, kSize};
  for (std::uint64_t step = 0; step < 4; ++step) {
    const std::vector<float> gradient = values(kSize, 100 + step, 0.5f);
    whole->step(w_whole, gradient);
    pieces->begin_update();
    for (std::size_t piece = cuts.size() - 1; piece-- > 0;) {
      const std::size_t first = cuts[piece], length = cuts[piece + 1] - cuts[piece];
      pieces->update_range(first, std::span(w_pieces).subspan(first, length),
                           std::span(gradient).subspan(first, length));
    }
    ASSERT_EQ(w_pieces, w_whole) << "step " << step;
  }
  EXPECT_EQ(pieces->steps_taken(), whole->steps_taken());
  const auto state_whole = whole->state();
  const auto state_pieces = pieces->state();
  ASSERT_EQ(state_pieces.size(), state_whole.size());
  for (std::size_t s = 0; s < state_whole.size(); ++s) EXPECT_EQ(*state_pieces[s].second, *state_whole[s].second);
}

OptimizerConfig with_schedule(OptimizerConfig config) {
  config.schedule = "cosine";
  config.total_updates = 10;
  return config;
}

INSTANTIATE_TEST_SUITE_P(
    All, UpdateRangeTest,
    testing::Values(Case{"sgd", {.kind = "sgd", .learning_rate = 0.1f, .weight_decay = 0.01f}, true},
                    Case{"momentum", {.kind = "momentum", .learning_rate = 0.1f, .weight_decay = 0.01f}, true},
                    Case{"nesterov_cosine",
                         with_schedule({.kind = "momentum", .learning_rate = 0.1f, .nesterov = true}), false},
                    Case{"adagrad", {.kind = "adagrad", .learning_rate = 0.1f, .weight_decay = 0.001f}, true},
                    Case{"adam", {.kind = "adam", .learning_rate = 0.01f, .weight_decay = 0.01f}, false},
                    Case{"adam_masked", {.kind = "adam", .learning_rate = 0.01f, .weight_decay = 0.01f}, true}),
    [](const testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(UpdateRange, ARangeBeyondTheSliceIsAnInternalError) {
  const auto optimizer = make_optimizer({.kind = "sgd"}, 10);
  std::vector<float> w(4), g(4);
  optimizer->begin_update();
  EXPECT_THROW(optimizer->update_range(8, w, g), Error);
}

}  // namespace
}  // namespace pstrain::optim
