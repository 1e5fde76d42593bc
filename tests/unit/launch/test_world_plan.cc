#include <gtest/gtest.h>

#include <algorithm>

#include "launch/world_plan.h"

namespace pstrain::launch {
namespace {

TEST(LayoutRule, WithoutCountOrRatioPstrainChoosesTheServersAndOneRankTrainsAlone) {
  const LayoutRule rule;  // the driver's default: pstrain's --num-pservers -1 (its sizing rule) at every size
  for (int ranks = 2; ranks <= 64; ++ranks) EXPECT_FALSE(layout_for(ranks, rule)) << ranks;
  EXPECT_EQ(layout_for(1, rule), (Layout{0, 1}));  // one rank trains locally
  EXPECT_EQ(smallest_world(rule), 1);
}

TEST(LayoutRule, RatioOfHalfIsHalfTheRanksRoundedDownAtLeastOne) {
  const LayoutRule rule{std::nullopt, 0.5, false};
  for (int ranks = 2; ranks <= 64; ++ranks) {
    const std::optional<Layout> layout = layout_for(ranks, rule);
    ASSERT_TRUE(layout) << ranks;
    EXPECT_EQ(layout->pservers, std::max(1, ranks / 2)) << ranks;
    EXPECT_EQ(layout->ranks(), ranks);
  }
}

TEST(LayoutRule, RatioFixedAndAllreduce) {
  EXPECT_EQ(layout_for(10, {std::nullopt, 0.25, false}), (Layout{2, 8}));
  EXPECT_EQ(layout_for(3, {std::nullopt, 0.25, false}), (Layout{1, 2}));  // at least one server
  EXPECT_EQ(layout_for(2, {std::nullopt, 0.9, false}), (Layout{1, 1}));   // at least one trainer
  EXPECT_EQ(layout_for(7, {2, 0.5, false}), (Layout{2, 5}));
  EXPECT_EQ(smallest_world({2, 0.5, false}), 3);
  EXPECT_EQ(layout_for(5, {std::nullopt, 0.5, true}), (Layout{0, 5}));
  EXPECT_EQ(smallest_world({std::nullopt, 0.5, true}), 1);
}

TEST(WorldPlan, ServersAreSpreadOverHostsAndTrainersFillTheRest) {
  const World world = plan_world({{"a", 3}, {"b", 3}, {"c", 2}}, 8, {std::nullopt, 0.5, false});
  ASSERT_EQ(world.layout, (Layout{4, 4}));
  // Ranks 0-3 are the servers: a, b, c, then a again; the trainers fill what is left in host order.
  EXPECT_EQ(world.rank_hosts, (std::vector<std::string>{"a", "b", "c", "a", "a", "b", "b", "c"}));
  EXPECT_EQ(describe(world.hosts), "a:3,b:3,c:2");
}

TEST(WorldPlan, WhenPstrainChoosesTheCountEveryRankIsDealtOnePerHostInTurn) {
  const HostList hosts{{"a", 3}, {"b", 1}, {"c", 2}};
  const World world = plan_world(hosts, 6, {});
  EXPECT_FALSE(world.layout);
  EXPECT_EQ(world.rank_hosts, (std::vector<std::string>{"a", "b", "c", "a", "c", "a"}));
  // Whatever count pstrain picks, its servers (the first ranks) sit where that count given to the driver puts them.
  for (int servers = 1; servers < 6; ++servers) {
    const World fixed = plan_world(hosts, 6, {servers, 0.5, false});
    EXPECT_TRUE(std::equal(fixed.rank_hosts.begin(), fixed.rank_hosts.begin() + servers, world.rank_hosts.begin()))
        << servers << " servers";
  }
}

TEST(WorldPlan, ServersSkipFullHosts) {
  const World world = plan_world({{"a", 1}, {"b", 4}}, 5, {3, 0.5, false});
  EXPECT_EQ(world.rank_hosts, (std::vector<std::string>{"a", "b", "b", "b", "b"}));
  EXPECT_EQ(world.layout, (Layout{3, 2}));
}

TEST(WorldPlan, AtMostMaxNpRanksTakenInListedOrder) {
  const World world = plan_world({{"a", 3}, {"b", 4}, {"c", 4}}, 5, {});
  EXPECT_EQ(describe(world.hosts), "a:3,b:2");
  EXPECT_EQ(world.ranks(), 5);
  EXPECT_FALSE(world.layout);  // pstrain chooses the split of the 5
}

TEST(WorldPlan, FitsWhileEveryUsedHostKeepsItsSlots) {
  const World world = plan_world({{"a", 2}, {"b", 2}}, 4, {});
  EXPECT_TRUE(world_fits(world, {{"a", 2}, {"b", 2}}));
  EXPECT_TRUE(world_fits(world, {{"b", 5}, {"a", 2}, {"c", 1}}));
  EXPECT_FALSE(world_fits(world, {{"a", 2}}));
  EXPECT_FALSE(world_fits(world, {{"a", 2}, {"b", 1}}));
}

}  // namespace
}  // namespace pstrain::launch
