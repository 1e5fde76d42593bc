#include "ps/shard_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <tuple>
#include <vector>

namespace pstrain::ps {
namespace {

struct PlanCase {
  std::vector<std::size_t> sizes;
  int shards;
  std::size_t block;
};

class ShardPlanTest : public ::testing::TestWithParam<PlanCase> {};

TEST_P(ShardPlanTest, EveryElementOwnedExactlyOnceAndBalancedWithinOneBlock) {
  const PlanCase& c = GetParam();
  const ShardPlan plan(c.sizes, c.shards, c.block);
  const std::size_t total = std::accumulate(c.sizes.begin(), c.sizes.end(), std::size_t{0});
  ASSERT_EQ(plan.total_size(), total);
  std::vector<int> owners(total, 0);
  std::size_t largest = 0;
  std::size_t smallest = total;
  for (int shard = 0; shard < plan.shards(); ++shard) {
    std::size_t local = 0;
    for (const Segment& segment : plan.segments(shard)) {
      EXPECT_EQ(segment.local_offset, local) << "slice must be contiguous, in segment order";
      for (std::size_t i = 0; i < segment.length; ++i) ++owners.at(segment.global_offset + i);
      local += segment.length;
    }
    EXPECT_EQ(local, plan.shard_size(shard));
    largest = std::max(largest, local);
    smallest = std::min(smallest, local);
  }
  for (std::size_t i = 0; i < total; ++i) ASSERT_EQ(owners[i], 1) << "element " << i;
  EXPECT_LE(largest - smallest, plan.largest_block());
  EXPECT_LE(plan.largest_block(), c.block);
}

TEST_P(ShardPlanTest, GatherThenScatterRestoresTheVector) {
  const PlanCase& c = GetParam();
  const ShardPlan plan(c.sizes, c.shards, c.block);
  std::vector<float> full(plan.total_size());
  std::iota(full.begin(), full.end(), 1.0f);
  std::vector<float> rebuilt(full.size(), -1.0f);
  for (int shard = 0; shard < plan.shards(); ++shard) {
    std::vector<float> slice(plan.shard_size(shard));
    plan.gather(shard, full, slice);
    plan.scatter(shard, slice, rebuilt);
  }
  EXPECT_EQ(rebuilt, full);
}

INSTANTIATE_TEST_SUITE_P(AwkwardSizes, ShardPlanTest,
                         ::testing::Values(PlanCase{{784 * 256, 256, 256 * 128, 128, 1280, 10}, 1, 8192},
                                           PlanCase{{784 * 256, 256, 256 * 128, 128, 1280, 10}, 2, 8192},
                                           PlanCase{{784 * 256, 256, 256 * 128, 128, 1280, 10}, 3, 8192},
                                           PlanCase{{784 * 256, 256, 256 * 128, 128, 1280, 10}, 7, 1000},
                                           PlanCase{{1}, 1, 1}, PlanCase{{1, 1, 1}, 5, 4},  // more shards than elements
                                           PlanCase{{17, 3, 101, 9}, 4, 7}, PlanCase{{1000}, 3, 1},
                                           PlanCase{{5, 5, 5}, 2, 1000}));

TEST(ShardPlan, MoreShardsThanBlocksLeavesSomeEmpty) {
  const ShardPlan plan({3}, 4, 8);
  EXPECT_EQ(plan.shard_size(0), 3u);
  EXPECT_EQ(plan.shard_size(1) + plan.shard_size(2) + plan.shard_size(3), 0u);
}

TEST(ShardPlan, IsDeterministic) {
  const ShardPlan a({784 * 256, 256, 256 * 128}, 3, 4096);
  const ShardPlan b({784 * 256, 256, 256 * 128}, 3, 4096);
  for (int shard = 0; shard < 3; ++shard) {
    ASSERT_EQ(a.segments(shard).size(), b.segments(shard).size());
    for (std::size_t i = 0; i < a.segments(shard).size(); ++i) {
      EXPECT_EQ(a.segments(shard)[i].global_offset, b.segments(shard)[i].global_offset);
    }
  }
}

}  // namespace
}  // namespace pstrain::ps
