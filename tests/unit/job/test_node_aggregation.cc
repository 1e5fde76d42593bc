#include "job/node_aggregation.h"

#include <gtest/gtest.h>

#include <vector>

namespace pstrain::train {
namespace {

TrainConfig config_of(modes::Mode mode, NodeAggregation aggregation, Overlap overlap = Overlap::kAuto) {
  TrainConfig config;
  config.mode = mode;
  config.node_aggregation = aggregation;
  config.overlap = overlap;
  return config;
}

// 1 server + 4 trainers; node_of_rank per world rank.
comm::PushGroups groups_for(const TrainConfig& config, std::vector<int> node_of_rank) {
  const comm::WorldLayout layout = comm::make_layout(0, static_cast<int>(node_of_rank.size()), 1);
  return plan_push_groups(config, layout, node_of_rank);
}

const std::vector<int> kOneNode = {0, 0, 0, 0, 0};
const std::vector<int> kTwoNodes = {0, 0, 0, 3, 3};  // the server and trainers 0-1; trainers 2-3
const std::vector<int> kNodePerTrainer = {0, 1, 2, 3, 4};

TEST(NodeAggregation, AutoKeepsEveryRunOnOneNodeAsItWas) {
  EXPECT_TRUE(groups_for(config_of(modes::Mode::kSync, NodeAggregation::kAuto), kOneNode).empty());
  EXPECT_TRUE(groups_for(config_of(modes::Mode::kSync, NodeAggregation::kAuto), kNodePerTrainer).empty());
  const comm::PushGroups two = groups_for(config_of(modes::Mode::kSync, NodeAggregation::kAuto), kTwoNodes);
  EXPECT_EQ(two.groups(), 2);
  EXPECT_EQ(two.members(1), (std::vector<int>{2, 3}));
  EXPECT_EQ(groups_for(config_of(modes::Mode::kGeo, NodeAggregation::kAuto), kTwoNodes).groups(), 2);
}

TEST(NodeAggregation, AutoIsOffWithoutACommonStepOrWithStreamedBlocks) {
  EXPECT_TRUE(groups_for(config_of(modes::Mode::kAsync, NodeAggregation::kAuto), kTwoNodes).empty());
  EXPECT_TRUE(groups_for(config_of(modes::Mode::kSsp, NodeAggregation::kAuto), kTwoNodes).empty());
  EXPECT_TRUE(groups_for(config_of(modes::Mode::kSync, NodeAggregation::kAuto, Overlap::kOn), kTwoNodes).empty());
  EXPECT_TRUE(groups_for(config_of(modes::Mode::kSync, NodeAggregation::kOff), kTwoNodes).empty());
}

TEST(NodeAggregation, OnGroupsTheTrainersOfOneNode) {
  const comm::PushGroups one = groups_for(config_of(modes::Mode::kSync, NodeAggregation::kOn), kOneNode);
  EXPECT_EQ(one.groups(), 1);
  EXPECT_EQ(one.members(0), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(groups_for(config_of(modes::Mode::kSync, NodeAggregation::kOn), kTwoNodes).groups(), 2);
}

}  // namespace
}  // namespace pstrain::train
