// Row tables beside the dense blocks: a shard's slice (ModelPartition) is its dense blocks then its rows of every
// table; cutting the flat vector into the shards' slices and putting it back gives every element once.
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
  EXPECT_EQ(plan.shard_size(0), 3u * 3 + 2u * 2);
  EXPECT_EQ(plan.shard_size(1), 2u * 3 + 1u * 2);
}

TEST(ModelPartition, SlicesOfEveryShardPutBackGiveEveryElementOnce) {
  for (const int shards : {1, 2, 3, 5, 9}) {
    const ShardPlan blocks(kSizes, shards, 4, kByRows);
    const TablePlan tables = two_tables(shards, 8);
    const ModelPartition partition(blocks, tables);
    std::vector<float> full(44);
    std::iota(full.begin(), full.end(), 1.0f);
    std::vector<float> rebuilt(44, 0.0f);
    std::size_t total = 0;
    for (int shard = 0; shard < shards; ++shard) {
      std::vector<float> slice(partition.slice_size(shard), -1.0f);
      partition.gather(shard, full, slice);
      for (const float value : slice) EXPECT_GT(value, 0.0f) << "an unfilled slice element on shard " << shard;
      partition.scatter(shard, slice, rebuilt);
      total += slice.size();
    }
    EXPECT_EQ(total, 44u) << shards << " shards";
    EXPECT_EQ(rebuilt, full) << shards << " shards";
  }
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

TEST(TablePlan, ShardHoldsRowsModuloShardsInLocalOrder) {
  const TablePlan tables = two_tables(3, 8);
  std::vector<float> full(44);
  std::iota(full.begin(), full.end(), 0.0f);
  std::vector<float> slice(tables.shard_size(1));
  tables.gather(1, full, slice);
  // Table a (offset 10, width 3): rows 1 and 4; table b (offset 36, width 2): row 1.
  const std::vector<float> expected = {13, 14, 15, 22, 23, 24, 38, 39};
  EXPECT_EQ(slice, expected);
}

}  // namespace
}  // namespace pstrain::ps
