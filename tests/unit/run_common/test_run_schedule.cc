// The run's schedule both roles walk (run_common/run_schedule.h), checked against counts worked out by hand.
#include <gtest/gtest.h>

#include "exchange/step_protocol.h"
#include "run_common/run_schedule.h"
#include "run_common/update_plan.h"

namespace pstrain::run_common {
namespace {

// 1 server + 2 trainers; trainer 0 reads shard 0 (10 samples), trainer 1 shard 1 (7); batches of 4, 3 passes.
JobContext two_trainers(modes::Mode mode, std::int64_t checkpoint_every_steps = 0) {
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
  const JobContext job = two_trainers(modes::Mode::kSync);
  const RunSchedule schedule(job.config, job.layout, job.data, std::nullopt);
  EXPECT_EQ(schedule.first_pass(), 0);
  EXPECT_EQ(schedule.passes(), 3);
  EXPECT_EQ(schedule.first_global_step(), 0);
  EXPECT_EQ(schedule.common_steps(0), 3);  // ceil(10 / 4), for the trainer with 7 samples too
  EXPECT_EQ(schedule.steps(1, 0), 3);
  EXPECT_EQ(schedule.steps_before(0), 0);
}

TEST(RunSchedule, AsyncTrainersTakeTheirOwnStepCounts) {
  const JobContext job = two_trainers(modes::Mode::kAsync);
  const RunSchedule schedule(job.config, job.layout, job.data, std::nullopt);
  EXPECT_EQ(schedule.steps(0, 0), 3);
  EXPECT_EQ(schedule.steps(1, 0), 2);  // ceil(7 / 4)
}

// Moved from DataPlan::steps_per_pass: the counts the learning-rate schedule runs over (run_common/update_plan.h).
TEST(RunSchedule, AWholePassUpdatesOncePerCommonStepOrOncePerTrainerStep) {
  JobContext job = two_trainers(modes::Mode::kSync);
  job.config.batch_size = 32;
  job.layout.trainers = 3;
  job.layout.world_size = 4;
  job.data.trainer_samples = {100, 130, 64};
  job.data.shard_samples = {100, 130, 64};
  EXPECT_EQ(RunSchedule::updates_per_pass(job.config, job.layout, job.data), 5);  // ceil(130/32), for everyone
  job.config.mode = modes::Mode::kAsync;
  EXPECT_EQ(RunSchedule::updates_per_pass(job.config, job.layout, job.data), 4 + 5 + 2);  // each its own ceil
  job.config.dynamic_dispatch = true;  // every trainer may read every shard; each chunk once per pass
  job.config.chunk_size = 50;
  job.data.trainer_samples = {294, 294, 294};
  EXPECT_EQ(RunSchedule::updates_per_pass(job.config, job.layout, job.data), 5 * 2 + 2);  // 5 chunks of 50, 44 left
}

TEST(UpdatePlan, AsyncDividesTheLearningRateByTheTrainersAndCountsEveryPush) {
  JobContext job = two_trainers(modes::Mode::kAsync);
  job.config.optimizer.learning_rate = 0.1f;
  const UpdatePlan async = plan_updates(job.config, job.layout, job.data);
  EXPECT_EQ(async.optimizer.learning_rate, 0.1f / 2);
  EXPECT_EQ(async.optimizer.total_updates, 3u * (3 + 2));  // 3 passes of ceil(10/4) + ceil(7/4) pushes
  EXPECT_EQ(async.optimizer.updates_per_pass, 5u);
  EXPECT_EQ(async.updates_per_global_step, 2u);
  job.config.mode = modes::Mode::kSync;
  const UpdatePlan sync = plan_updates(job.config, job.layout, job.data);
  EXPECT_EQ(sync.optimizer.learning_rate, 0.1f);
  EXPECT_EQ(sync.optimizer.total_updates, 3u * 3);
  EXPECT_EQ(sync.updates_per_global_step, 1u);
}

TEST(UpdatePlan, TheReportedRateIsTheScheduleAtTheUpdatesAppliedSoFar) {
  JobContext job = two_trainers(modes::Mode::kAsync);
  job.config.optimizer.learning_rate = 0.1f;
  job.config.optimizer.schedule = "cosine";
  const UpdatePlan plan = plan_updates(job.config, job.layout, job.data);
  EXPECT_EQ(plan.learning_rate_at(4), optim::scheduled_learning_rate(plan.optimizer, 8));  // 2 pushes a step
  EXPECT_EQ(plan.learning_rate_at(0), optim::scheduled_learning_rate(plan.optimizer, 1));
}

TEST(RunSchedule, ResumedMidPassCountsOnlyTheSamplesLeft) {
  const JobContext job = two_trainers(modes::Mode::kSync);
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
  const JobContext job = two_trainers(modes::Mode::kSync, 5);
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
  const JobContext job = two_trainers(modes::Mode::kSync);
  const RunSchedule schedule(job.config, job.layout, job.data, std::nullopt);
  EXPECT_EQ(schedule.stop_after_pass(0, 0), std::nullopt);
  EXPECT_EQ(schedule.stop_after_pass(2, exchange::kCheckpointNow), std::nullopt);
  EXPECT_EQ(schedule.stop_after_pass(0, exchange::kStopAfterCheckpoint), std::optional<bool>(false));
  EXPECT_EQ(schedule.stop_after_pass(2, exchange::kStopAfterCheckpoint), std::optional<bool>(true));
}

TEST(RunSchedule, GeoMeetsEveryGeoStepsAndAfterThePassLastStepAndCheckpointsOnlyThere) {
  JobContext job = two_trainers(modes::Mode::kGeo);
  job.config.steps_alone = 2;
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
  for (const modes::Mode mode : {modes::Mode::kSync, modes::Mode::kAsync, modes::Mode::kSsp, modes::Mode::kAllreduce}) {
    JobContext job = two_trainers(mode);
    job.config.steps_alone = 3;  // read by geo alone
    const RunSchedule schedule(job.config, job.layout, job.data, std::nullopt);
    for (std::int64_t step = 0; step < 5; ++step) EXPECT_TRUE(schedule.meets_after(step, 5)) << modes::to_string(mode);
  }
}

}  // namespace
}  // namespace pstrain::run_common
