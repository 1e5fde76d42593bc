// The row plan of sparse tables: every row owned by exactly one shard, shards within one row of each other, and a
// step's request grouped by shard with each distinct id once.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "core/error.h"
#include "ps/row_plan.h"

namespace pstrain::ps {
namespace {

TEST(RowPlan, EveryRowHasExactlyOneOwnerAndShardsDifferByAtMostOneRow) {
  // Awkward sizes: fewer rows than shards, primes, one row, a vocabulary-like size.
  for (const std::uint64_t rows : {1ull, 2ull, 3ull, 7ull, 10ull, 97ull, 10007ull, 16383ull}) {
    for (const int shards : {1, 2, 3, 4, 5, 8, 13}) {
      const RowPlan plan(rows, shards);
      std::vector<int> seen(rows, 0);
      std::uint64_t total = 0;
      std::uint64_t smallest = rows;
      std::uint64_t largest = 0;
      for (int s = 0; s < shards; ++s) {
        for (std::uint64_t local = 0; local < plan.rows_on(s); ++local) {
          const std::uint64_t row = plan.global_row(s, local);
          ASSERT_LT(row, rows);
          EXPECT_EQ(plan.owner(row), s);
          EXPECT_EQ(plan.local_index(row), local);
          ++seen[row];
        }
        total += plan.rows_on(s);
        smallest = std::min(smallest, plan.rows_on(s));
        largest = std::max(largest, plan.rows_on(s));
      }
      EXPECT_EQ(total, rows) << rows << " rows on " << shards << " shards";
      for (std::uint64_t row = 0; row < rows; ++row) EXPECT_EQ(seen[row], 1) << "row " << row;
      EXPECT_LE(largest - smallest, 1u) << rows << " rows on " << shards << " shards";
    }
  }
}

TEST(RowPlan, ZeroShardsIsAUsageError) {
  EXPECT_THROW(RowPlan(10, 0), Error);
}

TEST(RowRequest, DistinctIdsGroupedByShardInIncreasingLocalOrderAndEveryLookupFindsItsRow) {
  const RowPlan plan(1000, 3);
  std::mt19937_64 engine(7);
  std::vector<std::int64_t> ids(300);
  for (auto& id : ids) id = static_cast<std::int64_t>(engine() % 60);  // many repeats
  const RowRequest request = make_row_request(ids, plan);

  const std::set<std::int64_t> distinct(ids.begin(), ids.end());
  EXPECT_EQ(request.rows.size(), distinct.size());
  ASSERT_EQ(request.shard_begin.size(), 4u);
  EXPECT_EQ(request.shard_begin.front(), 0u);
  EXPECT_EQ(request.shard_begin.back(), request.rows.size());
  for (int s = 0; s < 3; ++s) {
    std::uint64_t previous_local = 0;
    bool first = true;
    for (const std::uint64_t row : request.rows_of(s)) {
      EXPECT_EQ(plan.owner(row), s);
      if (!first) {
        EXPECT_GT(plan.local_index(row), previous_local);
      }
      previous_local = plan.local_index(row);
      first = false;
    }
  }
  for (std::size_t k = 0; k < ids.size(); ++k) {
    EXPECT_EQ(request.rows[request.slot[k]], static_cast<std::uint64_t>(ids[k])) << "lookup " << k;
  }
}

TEST(RowRequest, AnIdOutsideTheTableIsAnInputErrorNamingIt) {
  const RowPlan plan(50, 2);
  for (const std::int64_t bad : {50ll, -1ll}) {
    const std::vector<std::int64_t> ids{3, bad, 4};
    try {
      make_row_request(ids, plan);
      FAIL() << "no error for id " << bad;
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ExitCode::kInputData);
      EXPECT_NE(std::string(error.what()).find(std::to_string(bad)), std::string::npos) << error.what();
      EXPECT_NE(std::string(error.what()).find("50 rows"), std::string::npos) << error.what();
    }
  }
}

TEST(RowRequest, AnEmptyBatchAsksNothing) {
  const RowRequest request = make_row_request({}, RowPlan(10, 2));
  EXPECT_TRUE(request.rows.empty());
  EXPECT_EQ(request.shard_begin, (std::vector<std::size_t>{0, 0, 0}));
}

}  // namespace
}  // namespace pstrain::ps
