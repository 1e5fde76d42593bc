#include "comm/push_groups.h"

#include <gtest/gtest.h>

#include <vector>

#include "comm/layout.h"

namespace pstrain::comm {
namespace {

TEST(PushGroups, OnePerTrainerIsTheSlotsOfToday) {
  const PushGroups groups = PushGroups::one_per_trainer(3);
  EXPECT_EQ(groups.trainers(), 3);
  EXPECT_EQ(groups.groups(), 3);
  EXPECT_FALSE(groups.aggregates());
  for (int trainer = 0; trainer < 3; ++trainer) {
    EXPECT_EQ(groups.group_of(trainer), trainer);
    EXPECT_EQ(groups.leader(trainer), trainer);
    EXPECT_EQ(groups.members(trainer), std::vector<int>{trainer});
  }
}

// Nodes given in any numbering and interleaved (a hostfile may deal ranks round-robin): groups are numbered by
// their lowest trainer, which leads them; members come in trainer order.
TEST(PushGroups, ByNodeNumbersGroupsByTheirLeaders) {
  const std::vector<int> node_of_trainer = {7, 7, 3, 7, 3, 1};
  const PushGroups groups = PushGroups::by_node(node_of_trainer);
  EXPECT_EQ(groups.trainers(), 6);
  EXPECT_EQ(groups.groups(), 3);
  EXPECT_TRUE(groups.aggregates());
  EXPECT_EQ(groups.group_of(0), 0);
  EXPECT_EQ(groups.group_of(1), 0);
  EXPECT_EQ(groups.group_of(2), 1);
  EXPECT_EQ(groups.group_of(3), 0);
  EXPECT_EQ(groups.group_of(4), 1);
  EXPECT_EQ(groups.group_of(5), 2);
  EXPECT_EQ(groups.leader(0), 0);
  EXPECT_EQ(groups.leader(1), 2);
  EXPECT_EQ(groups.leader(2), 5);
  EXPECT_EQ(groups.members(0), (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(groups.members(1), (std::vector<int>{2, 4}));
  EXPECT_EQ(groups.members(2), std::vector<int>{5});
}

TEST(PushGroups, OneTrainerPerNodeAggregatesNothing) {
  const std::vector<int> node_of_trainer = {4, 5, 6};
  const PushGroups groups = PushGroups::by_node(node_of_trainer);
  EXPECT_EQ(groups.groups(), 3);
  EXPECT_FALSE(groups.aggregates());
}

// What the windows and the client read: a layout without groups keeps one slot per trainer.
TEST(PushGroups, LayoutSlotsFollowTheGroups) {
  WorldLayout layout = make_layout(4, 6, 2);  // 2 servers, 4 trainers; rank 4 is trainer 2
  EXPECT_EQ(layout.push_slots(), 4);
  EXPECT_EQ(layout.push_slot(), 2);
  EXPECT_FALSE(layout.aggregates_pushes());
  const std::vector<int> node_of_trainer = {0, 0, 1, 1};
  layout.push_groups = PushGroups::by_node(node_of_trainer);
  EXPECT_EQ(layout.push_slots(), 2);
  EXPECT_EQ(layout.push_slot(), 1);
  EXPECT_TRUE(layout.aggregates_pushes());
}

}  // namespace
}  // namespace pstrain::comm
