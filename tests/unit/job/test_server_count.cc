// The sizing rule behind --num-pservers -1 (job/server_count.h, docs/sizing.md): counts worked by hand.
#include "job/server_count.h"

#include <gtest/gtest.h>

#include <utility>

namespace pstrain::job {
namespace {

// Round figures so that the hand calculations stay readable: 1 MB pushed per step, 1 ms of compute
// (1e9 FLOPs at 1e12 FLOP/s), links of 1 GB/s each way, shards summing or applying 10 GB/s.
ServerCountInputs round_job(int ranks, int nodes, bool sync) {
  ServerCountInputs inputs;
  inputs.ranks = ranks;
  inputs.nodes = nodes;
  inputs.dense_bytes = 1e6;
  inputs.step_flops = 1e9;
  inputs.summed_steps = sync;
  inputs.trainer_flops_per_s = 1e12;
  inputs.link_bytes_per_s = 1e9;
  inputs.update_bytes_per_s = 1e10;
  return inputs;
}

TEST(ServerCount, OneRankHasNoServers) {
  EXPECT_EQ(choose_server_count(round_job(1, 1, true)).servers, 0);
}

TEST(ServerCount, OneNodeKeepsHalfTheRanks) {
  for (const bool sync : {true, false}) {
    EXPECT_EQ(choose_server_count(round_job(2, 1, sync)).servers, 1);
    EXPECT_EQ(choose_server_count(round_job(3, 1, sync)).servers, 1);
    EXPECT_EQ(choose_server_count(round_job(4, 1, sync)).servers, 2);
    EXPECT_EQ(choose_server_count(round_job(5, 1, sync)).servers, 2);
    EXPECT_EQ(choose_server_count(round_job(32, 1, sync)).servers, 16);
  }
}

TEST(ServerCount, RanksPerNodeRoundUp) {
  EXPECT_EQ(ranks_per_node(round_job(16, 4, true)), 4);
  EXPECT_EQ(ranks_per_node(round_job(17, 4, true)), 5);
  EXPECT_EQ(ranks_per_node(round_job(3, 8, true)), 1);  // more nodes than ranks: one rank on each used node
}

// 16 ranks on 4 nodes (r = 4), sync: step(S) = 1 ms + 2 * max(k*T/S, m) ms + T/(10 S) ms, k = min(S, 4), m = min(T, 4).
//   S=1, T=15: 1 + 2*15 + 1.5 = 32.5 ms;  15 / 32.5 = 0.46 steps per ms
//   S=4, T=12: 1 + 2*12 + 0.3 = 25.3 ms;  0.47
//   S=8, T=8:  1 + 2*4 + 0.1  = 9.1 ms;   0.88 (the most)
TEST(ServerCount, SyncStepWorkedByHand) {
  const ServerCountInputs job = round_job(16, 4, true);
  EXPECT_NEAR(modeled_step_seconds(job, 1), 32.5e-3, 1e-9);
  EXPECT_NEAR(modeled_step_seconds(job, 4), 25.3e-3, 1e-9);
  EXPECT_NEAR(modeled_step_seconds(job, 8), 9.1e-3, 1e-9);
  const ServerCount count = choose_server_count(job);
  EXPECT_EQ(count.servers, 8);
  EXPECT_NEAR(count.step_seconds, 9.1e-3, 1e-9);
  EXPECT_NEAR(count.compute_seconds, 1e-3, 1e-12);
  EXPECT_NE(count.reason.find("sizing rule"), std::string::npos) << count.reason;
}

// The same job computing 100 ms a step: the exchange is small beside it, so fewer servers and more trainers win.
//   S=1, T=15: 100 + 30 + 1.5 = 131.5 ms; 15 / 131.5 = 0.1141 (the most)
//   S=2, T=14: 100 + 2*14 + 0.7 = 128.7;  14 / 128.7 = 0.1088
//   S=4, T=12: 100 + 24 + 0.3 = 124.3;    0.0965
//   S=8, T=8:  100 + 8 + 0.1 = 108.1;     0.0740
TEST(ServerCount, ComputeBoundSyncTakesOneServer) {
  ServerCountInputs job = round_job(16, 4, true);
  job.step_flops = 1e11;
  EXPECT_NEAR(modeled_step_seconds(job, 2), 128.7e-3, 1e-9);
  EXPECT_EQ(choose_server_count(job).servers, 1);
}

// Async, 16 ranks on 4 nodes, 20 ms of compute, shards at most 65% busy:
// step(S) = max(20 + 2*m, T/S * max(k, 0.1) / 0.65) ms.
//   S=1, T=15: max(28, 15 / 0.65 = 23.08) = 28 ms;  15 / 28 = 0.536 (the most)
//   S=2, T=14: max(28, 7 * 2 / 0.65 = 21.54) = 28;  14 / 28 = 0.5
// At 1 ms of compute (a trainer's cycle 9 ms): S <= 4 keep every shard on node 0's link, T / 0.65 ms: 0.65 each;
//   S=6, T=10: max(9, 10/6 * 4 / 0.65 = 10.26) = 10.26 ms;  0.975
//   S=7, T=9:  max(9, 9/7 * 4 / 0.65 = 7.91) = 9 ms;        1.0 (the most)
//   S=8, T=8:  max(9, 4 / 0.65 = 6.15) = 9 ms;              0.889
TEST(ServerCount, AsyncStepWorkedByHand) {
  ServerCountInputs job = round_job(16, 4, false);
  job.step_flops = 2e10;
  EXPECT_NEAR(modeled_step_seconds(job, 1), 28e-3, 1e-9);
  EXPECT_NEAR(modeled_step_seconds(job, 2), 28e-3, 1e-9);
  EXPECT_EQ(choose_server_count(job).servers, 1);
  job.step_flops = 1e9;
  EXPECT_NEAR(modeled_step_seconds(job, 6), 10.0 / 6 * 4 / 0.65 * 1e-3, 1e-9);
  EXPECT_NEAR(modeled_step_seconds(job, 7), 9e-3, 1e-9);
  EXPECT_EQ(choose_server_count(job).servers, 7);
}

// pstrain-launch deals the ranks over the nodes (--map-by node): rank i on node i mod 4, so the servers spread.
TEST(ServerCount, BusiestNodesCountsServersAndTrainersWherePlaced) {
  ServerCountInputs job = round_job(16, 4, true);
  EXPECT_EQ(busiest_nodes(job, 5), std::make_pair(4, 4));  // in order: ranks 0-3 on node 0, 4-7 on node 1, ...
  for (int rank = 0; rank < 16; ++rank) job.node_of_rank.push_back(rank % 4);
  EXPECT_EQ(busiest_nodes(job, 5), std::make_pair(2, 3));  // servers 0-4: node 0 twice; trainers 5-15: 3 on nodes 1-3
  EXPECT_EQ(busiest_nodes(job, 8), std::make_pair(2, 2));
}

// The same 16 ranks dealt round-robin (k and m from busiest_nodes), sync, 1 ms of compute:
//   S=4, T=12: k=1, m=3: 1 + 2 * max(12/4, 3) + 12/40 = 7.3 ms;    12 / 7.3 = 1.644 (the most)
//   S=8, T=8:  k=2, m=2: 1 + 2 * max(2*8/8, 2) + 8/80 = 5.1 ms;    1.569
//   S=6, T=10: k=2, m=3: 1 + 2 * max(2*10/6, 3) + 10/60 = 7.83 ms; 1.277
// Spread servers each have a link of their own: fewer of them do (packed in order: 8, SyncStepWorkedByHand).
TEST(ServerCount, ServersSpreadOverTheNodesNeedFewer) {
  ServerCountInputs job = round_job(16, 4, true);
  for (int rank = 0; rank < 16; ++rank) job.node_of_rank.push_back(rank % 4);
  EXPECT_NEAR(modeled_step_seconds(job, 4), 7.3e-3, 1e-9);
  EXPECT_NEAR(modeled_step_seconds(job, 8), 5.1e-3, 1e-9);
  EXPECT_EQ(choose_server_count(job).servers, 4);
}

// Never more than half the ranks, even where the model's bytes would ask for more.
// Node aggregation (one push and one pull per node holding trainers), 64 ranks on 16 nodes of 4, 10 ms of compute:
//   S=20: G = 11 trainer nodes (5..15), k = 4, m = 4: 10 + 2 * max(4 * 11/20, 1) + 11/20 * 0.1 + 2 * 3 * 0.1
//         = 10 + 4.4 + 0.055 + 0.6 = 15.055 ms; 44 / 15.055 = 2.92 steps per ms, the most (S=16: 48 / 16.675 = 2.88,
//         S=24: 40 / 13.975 = 2.86, S=21: 43 / 14.842 = 2.90);
//   one slot per trainer instead: S=30: 10 + 2 * 4 * 34/30 + 34/30 * 0.1 = 19.18 ms; 34 / 19.18 = 1.77, the most.
TEST(ServerCount, NodeAggregationNeedsFewerServersWorkedByHand) {
  ServerCountInputs job = round_job(64, 16, true);
  job.step_flops = 1e10;
  EXPECT_EQ(choose_server_count(job).servers, 30);
  job.node_pushes = true;
  EXPECT_EQ(trainer_nodes(job, 20), 11);
  EXPECT_EQ(trainer_nodes(job, 21), 11);  // node 5 keeps three trainers
  EXPECT_NEAR(modeled_step_seconds(job, 20), 15.055e-3, 1e-9);
  EXPECT_NEAR(modeled_step_seconds(job, 16), 16.675e-3, 1e-9);
  const ServerCount count = choose_server_count(job);
  EXPECT_EQ(count.servers, 20);
  EXPECT_NE(count.reason.find("node aggregation"), std::string::npos) << count.reason;
}

// The nodes holding trainers, counted from where ranks run or from ranks filling the nodes in order.
TEST(ServerCount, TrainerNodesCountsNodesWithATrainer) {
  ServerCountInputs filled = round_job(10, 3, true);  // 4 ranks per node: nodes hold ranks 0-3, 4-7, 8-9
  EXPECT_EQ(trainer_nodes(filled, 1), 3);
  EXPECT_EQ(trainer_nodes(filled, 4), 2);
  EXPECT_EQ(trainer_nodes(filled, 5), 2);
  ServerCountInputs placed = round_job(6, 3, true);
  placed.node_of_rank = {0, 1, 2, 0, 1, 2};  // one rank per host in turn
  EXPECT_EQ(trainer_nodes(placed, 1), 3);
  EXPECT_EQ(trainer_nodes(placed, 3), 3);
  EXPECT_EQ(trainer_nodes(placed, 5), 1);
}

TEST(ServerCount, NeverMoreThanHalfTheRanks) {
  ServerCountInputs job = round_job(8, 4, true);  // r = 2
  job.dense_bytes = 1e9;                          // a second per byte-way: bandwidth-bound
  EXPECT_EQ(choose_server_count(job).servers, 4);
}

TEST(ServerCount, UnknownModelFallsBackToHalf) {
  ServerCountInputs job = round_job(10, 2, true);
  job.dense_bytes = 0;
  const ServerCount count = choose_server_count(job);
  EXPECT_EQ(count.servers, 5);
  EXPECT_NE(count.reason.find("unknown"), std::string::npos) << count.reason;
}

}  // namespace
}  // namespace pstrain::job
