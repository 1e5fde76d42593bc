#include "comm/layout.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace pstrain::comm {
namespace {

TEST(Layout, OneRankTrainsLocally) {
  const WorldLayout layout = make_layout(0, 1, -1);
  EXPECT_EQ(layout.role, Role::kLocal);
  EXPECT_EQ(layout.pservers, 0);
  EXPECT_EQ(layout.trainers, 1);
  EXPECT_TRUE(layout.is_lead_trainer());
}

TEST(Layout, DefaultIsHalfTheRanksRoundedDownAtLeastOne) {
  EXPECT_EQ(make_layout(0, 2, -1).pservers, 1);
  EXPECT_EQ(make_layout(0, 3, -1).pservers, 1);
  EXPECT_EQ(make_layout(0, 4, -1).pservers, 2);
  EXPECT_EQ(make_layout(0, 7, -1).pservers, 3);
}

TEST(Layout, LowRanksAreServersTheRestTrainers) {
  const WorldLayout server = make_layout(1, 5, 2);
  EXPECT_TRUE(server.is_server());
  EXPECT_EQ(server.shard_index, 1);
  const WorldLayout trainer = make_layout(4, 5, 2);
  EXPECT_EQ(trainer.role, Role::kTrainer);
  EXPECT_EQ(trainer.trainer_index, 2);
  EXPECT_EQ(trainer.trainers, 3);
  EXPECT_EQ(trainer.trainer_rank(2), 4);
  EXPECT_TRUE(make_layout(2, 5, 2).is_lead_trainer());
}

void expect_usage_error(int rank, int size, int pservers, const std::string& fragment) {
  try {
    make_layout(rank, size, pservers);
    FAIL() << "no error for " << pservers << " servers on " << size << " ranks";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kUsage);
    EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << error.what();
  }
}

TEST(Layout, ImpossibleLayoutsAreUsageErrors) {
  expect_usage_error(0, 3, 3, "no trainer");
  expect_usage_error(0, 3, 5, "no trainer");
  expect_usage_error(0, 3, 0, "at least one parameter-server");
  expect_usage_error(0, 1, 1, "needs at least 2 ranks");
}

TEST(Layout, AllreduceMakesEveryRankATrainer) {
  for (int rank = 0; rank < 4; ++rank) {
    for (const int requested : {-1, 0}) {
      const WorldLayout layout = make_layout(rank, 4, requested, /*collective=*/true);
      EXPECT_EQ(layout.pservers, 0);
      EXPECT_EQ(layout.trainers, 4);
      EXPECT_EQ(layout.role, Role::kTrainer);
      EXPECT_EQ(layout.trainer_index, rank);
      EXPECT_EQ(layout.is_lead_trainer(), rank == 0);
    }
  }
  EXPECT_EQ(make_layout(0, 1, -1, true).role, Role::kLocal);
  try {
    make_layout(0, 4, 1, true);
    FAIL() << "servers accepted in all-reduce mode";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kUsage);
    EXPECT_NE(std::string(error.what()).find("no parameter servers"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace pstrain::comm
