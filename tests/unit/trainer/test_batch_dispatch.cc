// Where a trainer's batches come from in a pass: static steps over its own order (sync: a trainer out of samples
// still takes its steps, with empty batches) and dynamic chunks taken from a shared ticket counter.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "trainer/batch_dispatch.h"

namespace pstrain::trainer {
namespace {

std::vector<BatchRange> drain(PassBatches& batches) {
  std::vector<BatchRange> taken;
  BatchRange batch;
  for (std::int64_t step = 0; batches.next(step, batch); ++step) taken.push_back(batch);
  return taken;
}

void expect_ranges(const std::vector<BatchRange>& actual, const std::vector<BatchRange>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    EXPECT_EQ(actual[i].first, expected[i].first) << "batch " << i;
    EXPECT_EQ(actual[i].count, expected[i].count) << "batch " << i;
  }
}

TEST(PassBatches, StaticStepsCutTheOrderIntoBatchesWithAShortLastOne) {
  const DataDispatch none;
  PassBatches batches(none, 3, 10, 4, 8);
  EXPECT_FALSE(batches.dynamic());
  EXPECT_EQ(batches.steps(), 3);
  expect_ranges(drain(batches), {{0, 4}, {4, 4}, {8, 2}});
  EXPECT_EQ(batches.chunks_taken(), 0);
}

TEST(PassBatches, StaticStepsBeyondTheSamplesAreEmptyBatches) {
  const DataDispatch none;
  PassBatches batches(none, 4, 5, 4, 8);  // sync: the largest trainer's 4 steps, this one has 5 samples
  expect_ranges(drain(batches), {{0, 4}, {4, 1}, {5, 0}, {5, 0}});
}

TEST(PassBatches, DynamicTakesChunksUntilTheTicketsRunOut) {
  std::vector<std::int64_t> tickets{2, 0, 5};  // 5 is past the last chunk: the pass is over for this trainer
  std::size_t next_ticket = 0;
  DataDispatch dispatch;
  dispatch.take_chunk = [&] { return tickets.at(next_ticket++); };
  dispatch.reset = [] {};
  PassBatches batches(dispatch, 99, 20, 4, 6);  // chunks [0,6) [6,12) [12,18) [18,20); the static count is unused
  EXPECT_TRUE(batches.dynamic());
  EXPECT_EQ(batches.steps(), -1);
  expect_ranges(drain(batches), {{12, 4}, {16, 2}, {0, 4}, {4, 2}});
  EXPECT_EQ(batches.chunks_taken(), 2);
  EXPECT_EQ(next_ticket, tickets.size());
}

TEST(PassBatches, DynamicLastChunkIsCutAtTheEndOfTheOrder) {
  std::int64_t counter = 3;
  DataDispatch dispatch;
  dispatch.take_chunk = [&] { return counter++; };
  PassBatches batches(dispatch, 0, 20, 4, 6);
  expect_ranges(drain(batches), {{18, 2}});
  EXPECT_EQ(batches.chunks_taken(), 1);
}

}  // namespace
}  // namespace pstrain::trainer
