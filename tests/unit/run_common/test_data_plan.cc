#include "run_common/data_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

namespace pstrain::run_common {
namespace {

TEST(PassOrder, IsAPermutationDeterministicPerSeedPassAndTrainer) {
  const auto a = pass_order(1000, 7, 3, 1, true);
  auto sorted = a;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::uint32_t> identity(1000);
  std::iota(identity.begin(), identity.end(), 0u);
  EXPECT_EQ(sorted, identity);
  EXPECT_EQ(a, pass_order(1000, 7, 3, 1, true));
  EXPECT_NE(a, pass_order(1000, 7, 4, 1, true));  // reshuffled every pass
  EXPECT_NE(a, pass_order(1000, 7, 3, 2, true));
  EXPECT_NE(a, pass_order(1000, 8, 3, 1, true));
  EXPECT_NE(a, identity);
}

TEST(PassOrder, WithoutShuffleIsTheFileOrder) {
  std::vector<std::uint32_t> identity(10);
  std::iota(identity.begin(), identity.end(), 0u);
  EXPECT_EQ(pass_order(10, 7, 3, 1, false), identity);
}

TEST(TotalTrainSamples, AddsEveryTrainersShare) {
  DataPlan plan;
  plan.trainer_samples = {100, 130, 64};
  plan.shard_samples = {100, 130, 64};
  EXPECT_EQ(plan.total_train_samples(), 294u);
}

// Dynamic dispatch: every trainer may read every shard, but the job trains each sample once per pass (the start
// line said 1,680,000 samples for Fashion-MNIST's 60,000 at 28 trainers).
TEST(TotalTrainSamples, CountsEachSampleOnceWhenEveryTrainerReadsEveryShard) {
  DataPlan plan;
  plan.shard_samples = {100, 130, 64};
  plan.trainer_samples = {294, 294, 294, 294};
  EXPECT_EQ(plan.total_train_samples(), 294u);
}

}  // namespace
}  // namespace pstrain::run_common
