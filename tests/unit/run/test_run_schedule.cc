// The run's schedule both roles walk (run/run_schedule.h), checked against counts worked out by hand.
#include <gtest/gtest.h>

#include "exchange/step_protocol.h"
#include "run/run_schedule.h"

namespace pstrain::train {
namespace {

// 1 server + 2 trainers; trainer 0 reads shard 0 (10 samples), trainer 1 shard 1 (7); batches of 4, 3 passes.
JobContext two_trainers(Mode mode, std::int64_t checkpoint_every_steps = 0) {
  JobContext job;
  job.config.mode = mode;
  job.config.passes = 3;
  job.config.batch_size = 4;
  job.config.checkpoint_every_steps = checkpoint_every_steps;
  job.layout.world_size = 3;
  job.layout.pservers = 1;
  job.layout.trainers = 2;
  job.data.shard_samples = {10, 7};
  job.data.trainer_shards = {{0}, {1}};
  job.data.trainer_samples = {10, 7};
  return job;
}

TEST(RunSchedule, FreshSyncRunStepsEveryTrainerByTheLargestShare) {
  const JobContext job = two_trainers(Mode::kSync);
  const RunSchedule schedule(job.config, job.layout, job.data, std::nullopt);
  EXPECT_EQ(schedule.first_pass(), 0);
  EXPECT_EQ(schedule.passes(), 3);
  EXPECT_EQ(schedule.first_global_step(), 0);
  EXPECT_EQ(schedule.common_steps(0), 3);  // ceil(10 / 4), for the trainer with 7 samples too
  EXPECT_EQ(schedule.steps(1, 0), 3);
  EXPECT_EQ(schedule.steps_before(0), 0);
}

TEST(RunSchedule, AsyncTrainersTakeTheirOwnStepCounts) {
  const JobContext job = two_trainers(Mode::kAsync);
  const RunSchedule schedule(job.config, job.layout, job.data, std::nullopt);
  EXPECT_EQ(schedule.steps(0, 0), 3);
  EXPECT_EQ(schedule.steps(1, 0), 2);  // ceil(7 / 4)
}

TEST(RunSchedule, ResumedMidPassCountsOnlyTheSamplesLeft) {
  const JobContext job = two_trainers(Mode::kSync);
  checkpoint::TrainingState resumed;
  resumed.pass = 1;
  resumed.step_in_pass = 1;
  resumed.global_step = 4;
  resumed.consumed = {{1, 1, 1, 1, 0, 0, 0, 0, 0, 0}, {1, 1, 0, 0, 0, 0, 0}};
  const RunSchedule schedule(job.config, job.layout, job.data, resumed);
  EXPECT_EQ(schedule.first_pass(), 1);
  EXPECT_EQ(schedule.first_global_step(), 4);
  EXPECT_EQ(schedule.remaining(0, 1), 6u);
  EXPECT_EQ(schedule.remaining(1, 1), 5u);
  EXPECT_EQ(schedule.common_steps(1), 2);  // ceil(6 / 4)
  EXPECT_EQ(schedule.common_steps(2), 3);  // a whole pass again
  EXPECT_EQ(schedule.steps_before(1), 1);
  EXPECT_EQ(schedule.steps_before(2), 0);
}

TEST(RunSchedule, CheckpointFollowsAgreedFlagsAndTheStepIntervalButNeverThePassLastStep) {
  const JobContext job = two_trainers(Mode::kSync, 5);
  const RunSchedule schedule(job.config, job.layout, job.data, std::nullopt);
  EXPECT_EQ(schedule.after_common_step(0, 3, 1, 0), AfterStep::kGoOn);
  EXPECT_EQ(schedule.after_common_step(0, 3, 5, 0), AfterStep::kCheckpoint);  // every 5 steps
  EXPECT_EQ(schedule.after_common_step(1, 3, 2, exchange::kCheckpointNow), AfterStep::kCheckpoint);
  EXPECT_EQ(schedule.after_common_step(1, 3, 2, exchange::kCheckpointNow | exchange::kStopAfterCheckpoint),
            AfterStep::kCheckpointAndStop);
  // The pass's last step: the end-of-pass checkpoint covers it.
  EXPECT_EQ(schedule.after_common_step(2, 3, 5, exchange::kCheckpointNow), AfterStep::kGoOn);
}

TEST(RunSchedule, AStopAfterAPassEndsTheRunCompletedOnlyAfterTheLastPass) {
  const JobContext job = two_trainers(Mode::kSync);
  const RunSchedule schedule(job.config, job.layout, job.data, std::nullopt);
  EXPECT_EQ(schedule.stop_after_pass(0, 0), std::nullopt);
  EXPECT_EQ(schedule.stop_after_pass(2, exchange::kCheckpointNow), std::nullopt);
  EXPECT_EQ(schedule.stop_after_pass(0, exchange::kStopAfterCheckpoint), std::optional<bool>(false));
  EXPECT_EQ(schedule.stop_after_pass(2, exchange::kStopAfterCheckpoint), std::optional<bool>(true));
}

TEST(RunSchedule, GeoMeetsEveryGeoStepsAndAfterThePassLastStepAndCheckpointsOnlyThere) {
  JobContext job = two_trainers(Mode::kGeo);
  job.config.geo_steps = 2;
  const RunSchedule schedule(job.config, job.layout, job.data, std::nullopt);
  // 5 steps: meetings after steps 1 and 3 (every 2nd) and after step 4 (the pass's last).
  const std::vector<bool> meets{false, true, false, true, true};
  for (std::int64_t step = 0; step < 5; ++step) EXPECT_EQ(schedule.meets_after(step, 5), meets[step]) << step;
  const int stop = exchange::kCheckpointNow | exchange::kStopAfterCheckpoint;
  EXPECT_EQ(schedule.after_common_step(0, 5, 1, stop), AfterStep::kGoOn);  // alone: the wish waits for a meeting
  EXPECT_EQ(schedule.after_common_step(1, 5, 2, stop), AfterStep::kCheckpointAndStop);
  EXPECT_EQ(schedule.after_common_step(2, 5, 3, exchange::kCheckpointNow), AfterStep::kGoOn);
}

TEST(RunSchedule, EveryOtherModeMeetsAfterEveryStep) {
  for (const Mode mode : {Mode::kSync, Mode::kAsync, Mode::kSsp, Mode::kAllreduce}) {
    JobContext job = two_trainers(mode);
    job.config.geo_steps = 3;  // read by geo alone
    const RunSchedule schedule(job.config, job.layout, job.data, std::nullopt);
    for (std::int64_t step = 0; step < 5; ++step) EXPECT_TRUE(schedule.meets_after(step, 5)) << to_string(mode);
  }
}

}  // namespace
}  // namespace pstrain::train
