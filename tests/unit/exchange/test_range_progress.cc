// RangeProgress tells the streams (sync blocks, async pushes, all-reduce buckets) when a range of the flat vector
// is whole: reported in parts, across range boundaries, in any order, exactly once per step.
#include "exchange/range_progress.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "core/error.h"

namespace pstrain::exchange {
namespace {

// Ranges [0, 10), [10, 15), [15, 40).
RangeProgress three_ranges() {
  return RangeProgress({{0, 10}, {10, 5}, {15, 25}});
}

std::vector<std::size_t> report(RangeProgress& progress, std::size_t offset, std::size_t size) {
  std::vector<std::size_t> whole;
  progress.report(offset, size, [&whole](std::size_t index) { whole.push_back(index); });
  return whole;
}

TEST(RangeProgressTest, FindsTheRangesAPartOverlaps) {
  const RangeProgress progress = three_ranges();
  EXPECT_EQ(progress.ranges_in(0, 10), (std::pair<std::size_t, std::size_t>{0, 1}));
  EXPECT_EQ(progress.ranges_in(9, 2), (std::pair<std::size_t, std::size_t>{0, 2}));
  EXPECT_EQ(progress.ranges_in(12, 20), (std::pair<std::size_t, std::size_t>{1, 3}));
  EXPECT_EQ(progress.ranges_in(39, 1), (std::pair<std::size_t, std::size_t>{2, 3}));
}

TEST(RangeProgressTest, ARangeIsWholeOnceEveryPartIsReportedInAnyOrder) {
  RangeProgress progress = three_ranges();
  EXPECT_TRUE(report(progress, 30, 10).empty());                       // the end of range 2
  EXPECT_EQ(report(progress, 8, 10), (std::vector<std::size_t>{1}));   // spans ranges 0, 1 and 2: 1 whole
  EXPECT_EQ(report(progress, 0, 8), (std::vector<std::size_t>{0}));    // the rest of range 0
  EXPECT_EQ(report(progress, 18, 12), (std::vector<std::size_t>{2}));  // the rest of range 2
}

TEST(RangeProgressTest, ResetStartsANewStep) {
  RangeProgress progress = three_ranges();
  EXPECT_EQ(report(progress, 0, 40), (std::vector<std::size_t>{0, 1, 2}));
  progress.reset();
  EXPECT_EQ(report(progress, 10, 5), (std::vector<std::size_t>{1}));
}

TEST(RangeProgressTest, ReportingAPartTwiceInOneStepIsAnError) {
  RangeProgress progress = three_ranges();
  report(progress, 0, 10);
  EXPECT_THROW(report(progress, 5, 1), Error);
}

}  // namespace
}  // namespace pstrain::exchange
