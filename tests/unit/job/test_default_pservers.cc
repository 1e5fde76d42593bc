// --num-pservers -1 on a job's flags and data (job/default_pservers.h): the model planned from the data's
// metadata feeds the sizing rule; counts worked by hand from the rule's formulas (job/server_count.h).
#include "job/default_pservers.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "data/shard.h"

namespace pstrain::job {
namespace {

namespace fs = std::filesystem;

// Ranks filling `nodes` nodes in order, ranks / nodes each (mpirun's by-slot mapping).
std::vector<int> in_order(int ranks, int nodes) {
  std::vector<int> node_of_rank;
  for (int rank = 0; rank < ranks; ++rank) node_of_rank.push_back(rank / (ranks / nodes));
  return node_of_rank;
}

// A data folder whose test shard says: 28x28 samples, 10 classes (the MLP 784-256-128-10, 235,146 parameters).
class DefaultServerCount : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("pstrain-default-pservers-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    data::Samples shard;
    shard.meta.dataset = "unit-test";
    shard.meta.source = "test_default_pservers";
    shard.meta.sample_shape = {28, 28};
    shard.meta.num_classes = 10;
    shard.meta.sample_count = 1;
    shard.features.assign(28 * 28, 0.5f);
    shard.labels = {3};
    data::write_shard(dir_ / data::kTestShardFileName, shard);
    config_.data_dir = dir_;
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  config::TrainConfig config_;  // mlp, hidden 256,128, batch 64, sync, sgd, cpu
};

TEST_F(DefaultServerCount, PlansTheMlpFromTheData) {
  const ServerCountInputs inputs = server_count_inputs(config_, in_order(16, 4));
  EXPECT_DOUBLE_EQ(inputs.dense_bytes, 235146.0 * 4);
  // 3 x (2 FLOPs per weight: 235,008 weights) x 64 samples, plus the biases and activations the plan counts.
  EXPECT_NEAR(inputs.step_flops, 3 * 2 * 235008.0 * 64, 0.01 * 3 * 2 * 235008.0 * 64);
  EXPECT_TRUE(inputs.summed_steps);
  EXPECT_EQ(inputs.nodes, 4);
}

// 16 ranks, 4 per node, 100 Gb/s (B/W = 0.0752 ms), t_c = 90.2 MFLOP / 1.3e11 = 0.694 ms, sums at 12 GB/s:
//   S=8, T=8: 0.694 + 2 * 4 * 0.0752 + 8 * 0.94 MB / (8 * 12 GB/s) = 1.374 ms; 5.82 trainer-steps per ms
//   S=7, T=9: 0.694 + 2 * (4 * 9 / 7) * 0.0752 + 0.101 = 1.569 ms;  5.74
//   S=4, T=12: 0.694 + 2 * 12 * 0.0752 + 0.235 = 2.734 ms;           4.39
TEST_F(DefaultServerCount, SyncMlpOnFourNodesTakesHalf) {
  config_.node_aggregation = config::NodeAggregation::kOff;  // one slot per trainer
  const ServerCount count = default_server_count(config_, in_order(16, 4));
  EXPECT_EQ(count.servers, 8) << count.reason;
  EXPECT_NEAR(count.step_seconds, 1.374e-3, 0.01e-3);
}

// The same job as pstrain runs it by default across nodes (--node-aggregation auto): one push and one pull per node
// holding trainers, the leader summing its node's other 3 gradients and handing them the parameters (B/U = 0.0784):
//   S=2, G=4: 0.694 + 2 * max(2 * 4/2, 1) * 0.0752 + 4/2 * 0.0784 + 2 * 3 * 0.0784 = 1.923 ms; 14 / 1.923 = 7.28
//   S=1, G=4: 0.694 + 2 * 4 * 0.0752 + 4 * 0.0784 + 0.470 = 2.080 ms; 7.21
//   S=4, G=3: 0.694 + 2 * 3 * 0.0752 + 0.75 * 0.0784 + 0.470 = 1.674 ms; 7.17
// so 2 servers, where one slot per trainer needs 8 for 5.82 trainer-steps per ms.
TEST_F(DefaultServerCount, SyncMlpWithNodeAggregationTakesTwo) {
  const ServerCount count = default_server_count(config_, in_order(16, 4));
  EXPECT_EQ(count.servers, 2) << count.reason;
  EXPECT_NEAR(count.step_seconds, 1.923e-3, 0.01e-3);
  config_.overlap = config::Overlap::kOn;  // streamed blocks: auto leaves the trainers their own slots
  EXPECT_EQ(default_server_count(config_, in_order(16, 4)).servers, 8);
}

// Async, shards applying 8 GB/s and at most 65% busy:
//   step(S) = max(0.694 + 2 * 4 * 0.0752, T/S * 0.94 MB * max(k / 12.5, 1 / 8) /GB/s / 0.65)
//   S=1, T=15: max(1.296, 15 * 0.94 * 0.125 / 0.65 = 2.713) = 2.713 ms;  5.53 trainer-steps per ms
//   S=2, 3, 4: their k = S shards share node 0's link: T * 0.94 / 12.5 / 0.65 = 1.621, 1.505, 1.389 ms; 8.64 each
//   S=5, T=11: max(1.296, 11/5 * 0.94 * 0.32 / 0.65 = 1.019) = 1.296 ms;  8.49
// so 2 (the fewest of the equals; the dry-run's best of 1, 2, 4 and 8 too).
TEST_F(DefaultServerCount, AsyncMlpOnFourNodesTakesTwo) {
  config_.mode = modes::Mode::kAsync;
  EXPECT_EQ(default_server_count(config_, in_order(16, 4)).servers, 2);
}

// Batch 1024: t_c = 11.1 ms; S=1: 11.1 + 2 * 15 * 0.0752 + 15 * 0.0784 = 14.54 ms, 1.032 per ms;
// S=2: 11.1 + 2 * 14 * 0.0752 + 7 * 0.0784 = 13.76 ms, 1.017: one server.
TEST_F(DefaultServerCount, LargeBatchesNeedOneServer) {
  config_.batch_size = 1024;
  EXPECT_EQ(default_server_count(config_, in_order(16, 4)).servers, 1);
}

TEST_F(DefaultServerCount, OneNodeNeedsNoModelAndKeepsHalf) {
  config_.data_dir = dir_ / "missing";
  const ServerCount count = default_server_count(config_, in_order(5, 1));
  EXPECT_EQ(count.servers, 2);
  EXPECT_NE(count.reason.find("one node"), std::string::npos) << count.reason;
}

TEST_F(DefaultServerCount, UnplannableModelFallsBackToHalfAndSaysWhy) {
  config_.data_dir = dir_ / "missing";
  const ServerCount count = default_server_count(config_, in_order(16, 4));
  EXPECT_EQ(count.servers, 8);
  EXPECT_NE(count.reason.find("could not be planned"), std::string::npos) << count.reason;
}

}  // namespace
}  // namespace pstrain::job
