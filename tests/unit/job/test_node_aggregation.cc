#include "job/node_aggregation.h"

#include <gtest/gtest.h>

#include <vector>

namespace pstrain::job {
namespace {

config::TrainConfig config_of(modes::Mode mode, config::NodeAggregation aggregation,
                              config::Overlap overlap = config::Overlap::kAuto) {
  config::TrainConfig config;
  config.mode = mode;
  config.node_aggregation = aggregation;
  config.overlap = overlap;
  return config;
}

// 1 server + 4 trainers; node_of_rank per world rank.
comm::PushGroups groups_for(const config::TrainConfig& config, std::vector<int> node_of_rank) {
  const comm::WorldLayout layout = comm::make_layout(0, static_cast<int>(node_of_rank.size()), 1);
  return plan_push_groups(config, layout, node_of_rank);
}

const std::vector<int> kOneNode = {0, 0, 0, 0, 0};
const std::vector<int> kTwoNodes = {0, 0, 0, 3, 3};  // the server and trainers 0-1; trainers 2-3
const std::vector<int> kNodePerTrainer = {0, 1, 2, 3, 4};

TEST(NodeAggregation, AutoKeepsEveryRunOnOneNodeAsItWas) {
  EXPECT_TRUE(groups_for(config_of(modes::Mode::kSync, config::NodeAggregation::kAuto), kOneNode).empty());
  EXPECT_TRUE(groups_for(config_of(modes::Mode::kSync, config::NodeAggregation::kAuto), kNodePerTrainer).empty());
  const comm::PushGroups two = groups_for(config_of(modes::Mode::kSync, config::NodeAggregation::kAuto), kTwoNodes);
  EXPECT_EQ(two.groups(), 2);
  EXPECT_EQ(two.members(1), (std::vector<int>{2, 3}));
  EXPECT_EQ(groups_for(config_of(modes::Mode::kGeo, config::NodeAggregation::kAuto), kTwoNodes).groups(), 2);
}

TEST(NodeAggregation, AutoIsOffWithoutACommonStepOrWithStreamedBlocks) {
  EXPECT_TRUE(groups_for(config_of(modes::Mode::kAsync, config::NodeAggregation::kAuto), kTwoNodes).empty());
  EXPECT_TRUE(groups_for(config_of(modes::Mode::kSsp, config::NodeAggregation::kAuto), kTwoNodes).empty());
  EXPECT_TRUE(groups_for(config_of(modes::Mode::kSync, config::NodeAggregation::kAuto, config::Overlap::kOn), kTwoNodes)
                  .empty());
  EXPECT_TRUE(groups_for(config_of(modes::Mode::kSync, config::NodeAggregation::kOff), kTwoNodes).empty());
}

TEST(NodeAggregation, OnGroupsTheTrainersOfOneNode) {
  const comm::PushGroups one = groups_for(config_of(modes::Mode::kSync, config::NodeAggregation::kOn), kOneNode);
  EXPECT_EQ(one.groups(), 1);
  EXPECT_EQ(one.members(0), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(groups_for(config_of(modes::Mode::kSync, config::NodeAggregation::kOn), kTwoNodes).groups(), 2);
}

}  // namespace
}  // namespace pstrain::job
