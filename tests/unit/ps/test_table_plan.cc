// Row tables beside the dense blocks: the tables belong to no shard's blocks, a step's slots are bounded by the
// batch, and a shard's dense blocks map to the dense layout (the tables taken out) and back, every element once.
// Which rows a shard holds: test_row_plan.cc.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "ps/shard_plan.h"
#include "ps/table_plan.h"

namespace pstrain::ps {
namespace {

// A model of [dense 10][table 7 x 3][dense 5][table 4 x 2]: parameters 1 and 3 are tables.
const std::vector<std::size_t> kSizes = {10, 21, 5, 8};
const std::vector<bool> kByRows = {false, true, false, true};

TablePlan two_tables(int shards, std::size_t batch) {
  return TablePlan({{"a.weight", 10, 7, 3, 2}, {"b.weight", 36, 4, 2, 2}}, shards, batch);
}

TEST(ShardPlan, RowTablesKeepTheirPlaceInTheFlatVectorButBelongToNoShard) {
  const ShardPlan plan(kSizes, 3, 4, kByRows);
  EXPECT_EQ(plan.total_size(), 44u);
  std::size_t served = 0;
  for (int shard = 0; shard < plan.shards(); ++shard) {
    served += plan.shard_size(shard);
    for (const Segment& segment : plan.segments(shard)) {
      const bool in_dense = segment.global_offset + segment.length <= 10 ||
                            (segment.global_offset >= 31 && segment.global_offset + segment.length <= 36);
      EXPECT_TRUE(in_dense) << "segment at " << segment.global_offset << " of length " << segment.length;
    }
  }
  EXPECT_EQ(served, 15u);
}

TEST(TablePlan, CapacityIsTheBatchsLookupsOrTheShardsRowsWhicheverIsFewer) {
  const TablePlan plan = two_tables(3, 2);  // 2 samples x 2 lookups = 4 rows at most per step
  EXPECT_EQ(plan.capacity(0, 0), 3u);       // table a: rows 0, 3, 6 on shard 0
  EXPECT_EQ(plan.capacity(0, 2), 2u);       // rows 2, 5
  EXPECT_EQ(plan.capacity(1, 0), 2u);       // table b: rows 0, 3
  const TablePlan large_batch = two_tables(1, 100);
  EXPECT_EQ(large_batch.capacity(0, 0), 7u);
  const TablePlan small_batch = two_tables(1, 1);
  EXPECT_EQ(small_batch.capacity(0, 0), 2u);
}

TEST(ModelPartition, DenseBlocksGoToTheDenseLayoutWithTheTablesTakenOut) {
  for (const int shards : {1, 2, 3, 5}) {
    const ShardPlan blocks(kSizes, shards, 4, kByRows);
    const TablePlan tables = two_tables(shards, 8);
    const ModelPartition partition(blocks, tables);
    std::vector<float> full(44);
    std::iota(full.begin(), full.end(), 1.0f);
    // The dense layout: the full vector without the tables' elements, in order.
    std::vector<float> dense;
    for (std::size_t i = 0, p = 0, offset = 0; p < kSizes.size(); offset += kSizes[p], ++p) {
      for (i = 0; !kByRows[p] && i < kSizes[p]; ++i) dense.push_back(full[offset + i]);
    }
    ASSERT_EQ(partition.dense_size(), dense.size());
    std::vector<float> rebuilt(dense.size(), 0.0f);
    for (int shard = 0; shard < shards; ++shard) {
      std::vector<float> from_full(blocks.shard_size(shard));
      std::vector<float> from_dense(blocks.shard_size(shard));
      blocks.gather(shard, full, from_full);
      partition.gather_dense(shard, dense, from_dense);
      EXPECT_EQ(from_dense, from_full) << "shard " << shard << " of " << shards;
      partition.scatter_dense(shard, from_dense, rebuilt);
    }
    EXPECT_EQ(rebuilt, dense) << shards << " shards";
  }
}

}  // namespace
}  // namespace pstrain::ps
