#include <gtest/gtest.h>

#include "exchange/exchange_stats.h"

namespace pstrain::exchange {
namespace {

TEST(StalenessStats, MeanMaxAndPercentiles) {
  StalenessStats stats;
  for (const int value : {0, 0, 1, 1, 1, 2, 5, 100}) stats.record(value);
  EXPECT_EQ(stats.count, 8);
  EXPECT_DOUBLE_EQ(stats.mean(), 110.0 / 8.0);
  EXPECT_EQ(stats.max, 100);
  EXPECT_EQ(stats.percentile(0.0), 0);
  EXPECT_EQ(stats.percentile(0.5), 1);
  EXPECT_EQ(stats.percentile(1.0), static_cast<std::int64_t>(StalenessStats::kBuckets - 1));  // overflow bucket
  EXPECT_EQ(stats.histogram[StalenessStats::kBuckets - 1], 1);
}

TEST(StalenessStats, EmptyIsZero) {
  const StalenessStats stats;
  EXPECT_EQ(stats.mean(), 0.0);
  EXPECT_EQ(stats.percentile(0.9), 0);
}

}  // namespace
}  // namespace pstrain::exchange
