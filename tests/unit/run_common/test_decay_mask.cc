// The weight-decay mask follows each shard's slice of the flat parameter vector.
#include "run_common/decay_mask.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "optim/optimizer.h"

namespace pstrain::run_common {
namespace {

// fc1.weight [0, 6), fc1.bias [6, 9), bn1.gamma [9, 11), bn1.beta [11, 13), fc2.weight [13, 17).
std::vector<nn::ParameterInfo> layout() {
  return {{"fc1.weight", {3, 2}, 0, 6},
          {"fc1.bias", {3}, 6, 3},
          {"bn1.gamma", {2}, 9, 2},
          {"bn1.beta", {2}, 11, 2},
          {"fc2.weight", {2, 2}, 13, 4}};
}

std::vector<std::size_t> sizes() {
  return {6, 3, 2, 2, 4};
}

optim::OptimizerConfig excluding() {
  optim::OptimizerConfig config;
  config.weight_decay = 1e-4f;
  config.decay_bias_and_norm = false;
  return config;
}

TEST(DecayMask, EmptyWhenEverythingDecays) {
  const ps::ShardPlan plan(sizes(), 2, 4);
  optim::OptimizerConfig config = excluding();
  config.decay_bias_and_norm = true;
  EXPECT_TRUE(decay_mask(config, layout(), plan, 0).empty());
  config = excluding();
  config.weight_decay = 0.0f;  // nothing to exclude from
  EXPECT_TRUE(decay_mask(config, layout(), plan, 1).empty());
}

TEST(DecayMask, WholeModel) {
  const ps::ShardPlan whole(sizes(), 1, 17);
  EXPECT_EQ(decay_mask(excluding(), layout(), whole, 0),
            (std::vector<std::uint8_t>{1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1}));
}

// Blocks of at most 4 dealt over 3 shards: every element of every slice carries its parameter's rule (weights
// are [0, 6) and [13, 17)).
TEST(DecayMask, FollowsTheSliceOnEveryShard) {
  const ps::ShardPlan plan(sizes(), 3, 4);
  std::size_t covered = 0;
  for (int shard = 0; shard < 3; ++shard) {
    const std::vector<std::uint8_t> mask = decay_mask(excluding(), layout(), plan, shard);
    ASSERT_EQ(mask.size(), plan.shard_size(shard));
    for (const ps::Segment& segment : plan.segments(shard)) {
      for (std::size_t k = 0; k < segment.length; ++k) {
        const std::size_t global = segment.global_offset + k;
        const bool weight = global < 6 || global >= 13;
        EXPECT_EQ(mask[segment.local_offset + k], weight ? 1 : 0) << "shard " << shard << " element " << global;
        ++covered;
      }
    }
  }
  EXPECT_EQ(covered, 17u);
  // Some slice mixes decayed and undecayed elements, so a mask that ignored the segments would fail above.
  bool mixed = false;
  for (int shard = 0; shard < 3; ++shard) {
    const auto mask = decay_mask(excluding(), layout(), plan, shard);
    mixed |= std::count(mask.begin(), mask.end(), 1) > 0 && std::count(mask.begin(), mask.end(), 0) > 0;
  }
  EXPECT_TRUE(mixed);
}

// A sharded SGD step with the per-slice masks equals the whole-model step with the whole mask.
TEST(DecayMask, ShardedStepsEqualTheWholeModelStep) {
  const ps::ShardPlan plan(sizes(), 2, 3);
  const ps::ShardPlan whole(sizes(), 1, 17);
  optim::OptimizerConfig config = excluding();
  config.kind = "sgd";
  config.learning_rate = 0.5f;
  config.weight_decay = 0.25f;
  std::vector<float> parameters(17);
  std::vector<float> gradients(17);
  for (std::size_t i = 0; i < 17; ++i) {
    parameters[i] = 1.0f + static_cast<float>(i);
    gradients[i] = 0.125f * static_cast<float>(i % 5);
  }
  std::vector<float> expected = parameters;
  optim::make_optimizer(config, 17, decay_mask(config, layout(), whole, 0))->step(expected, gradients);
  std::vector<float> sharded = parameters;
  for (int shard = 0; shard < 2; ++shard) {
    std::vector<float> slice(plan.shard_size(shard));
    std::vector<float> slice_gradient(plan.shard_size(shard));
    plan.gather(shard, sharded, slice);
    plan.gather(shard, gradients, slice_gradient);
    optim::make_optimizer(config, slice.size(), decay_mask(config, layout(), plan, shard))->step(slice, slice_gradient);
    plan.scatter(shard, slice, sharded);
  }
  EXPECT_EQ(sharded, expected);
  // And the mask mattered: fc1.bias (element 6) moved by the gradient alone, fc1.weight (element 0) also decayed.
  EXPECT_FLOAT_EQ(expected[6], 7.0f - 0.5f * 0.125f * 1);
  EXPECT_FLOAT_EQ(expected[0], 1.0f - 0.5f * (0.0f + 0.25f * 1.0f));
}

}  // namespace
}  // namespace pstrain::run_common
