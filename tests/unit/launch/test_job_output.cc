// Lines as pstrain (lib/train, lib/report/progress.cc) and Open MPI 4.1's mpirun print them.
#include <gtest/gtest.h>

#include "launch/job_output.h"
#include "report/progress_line.h"

namespace pstrain::launch {
namespace {

TEST(JobOutput, FreshRunFirstStepProgressAndFinish) {
  JobOutput output;
  EXPECT_FALSE(output.read_line("[rank 1 trainer 0] pstrain 0.1.0: 3 ranks = 1 parameter-server shard(s) + 2 ..."));
  EXPECT_TRUE(output.read_line("[rank 1 trainer 0] first step done 1.37984 s after start"));
  EXPECT_FALSE(output.read_line("[rank 1 trainer 0] first step done 9 s after start"));  // only the first counts
  output.read_line("[rank 1 trainer 0] pass 0 of 0..2 step 21/60 (35%), 654 samples/s, pass left 2s, run left ~8s");
  EXPECT_EQ(output.reached().pass, 0);
  EXPECT_EQ(output.reached().step_in_pass, 21);
  output.read_line("[rank 1 trainer 0] pass 1 of 0..2 step 4, 700 samples/s");  // dynamic dispatch: no total
  EXPECT_EQ(output.reached().pass, 1);
  EXPECT_EQ(output.reached().step_in_pass, 4);
  EXPECT_FALSE(output.resumed());
  EXPECT_FALSE(output.finished());
  output.read_line("[rank 1 trainer 0] training finished: 3 pass(es) in 11s, test accuracy best 0.7655 (pass 1)");
  EXPECT_TRUE(output.finished());
  EXPECT_FALSE(output.stopped_on_signal());
}

TEST(JobOutput, StartLineNamesTheSplitPstrainRuns) {
  JobOutput output;
  output.read_line("[rank 1 trainer 0] pstrain 0.1.0: 3 ranks = 1 parameter-server shard(s) + 2 ...");  // cut short
  EXPECT_FALSE(output.layout());
  // lib/job/job_start.cc's log_start, then the count --num-pservers -1 chose (the driver gives -1 by default).
  output.read_line(
      "[rank 2 trainer 0] pstrain 0.1.0: 5 ranks = 2 parameter-server shard(s) + 3 trainer(s), mode sync, "
      "cpu backend, mlp 235146 parameters, 60000 training samples, batch 64 per trainer");
  ASSERT_TRUE(output.layout());
  EXPECT_EQ(*output.layout(), (Layout{2, 3}));
}

TEST(JobOutput, ResumedRunCountsProgressFromTheCheckpoint) {
  JobOutput output;
  output.read_line("[rank 2 trainer 0] resuming from /r/checkpoints/ckpt-49: pass 0, step 49 of it, global step 49");
  ASSERT_TRUE(output.resumed());
  EXPECT_EQ(output.resumed()->checkpoint, "/r/checkpoints/ckpt-49");
  EXPECT_EQ(output.resumed()->global_step, 49);
  EXPECT_EQ(output.reached().step_in_pass, 49);
  // This job's progress lines count the steps it took in the resumed pass.
  output.read_line("[rank 2 trainer 0] pass 0 of 0..5 step 5/11 (45%), 600 samples/s, pass left 1s, run left ~9s");
  EXPECT_EQ(output.reached().pass, 0);
  EXPECT_EQ(output.reached().step_in_pass, 54);
  output.read_line("[rank 2 trainer 0] pass 1 of 0..5 step 3/60 (5%), 600 samples/s, pass left 9s, run left ~40s");
  EXPECT_EQ(output.reached().pass, 1);
  EXPECT_EQ(output.reached().step_in_pass, 3);
  output.read_line("[rank 2 trainer 0] stopped on a signal after writing a checkpoint; continue with --resume auto");
  EXPECT_TRUE(output.stopped_on_signal());
}

TEST(JobOutput, MpirunNamesTheFailedRank) {
  JobOutput output;
  output.read_line("Primary job  terminated normally, but 1 process returned");
  output.read_line("mpirun noticed that process rank 2 with PID 0 on node vm exited on signal 9 (Killed).");
  output.read_line("mpirun noticed that process rank 2 with PID 0 on node vm exited on signal 9 (Killed).");
  EXPECT_EQ(output.failed_ranks(), std::vector<int>{2});
  EXPECT_NE(output.failure_detail().find("rank 2"), std::string::npos);
}

// The line pstrain's trainer prints (lib/report/progress_line, behind the log's rank prefix) is the line the driver
// reads: a change of its format must fail here, not leave every crash's steps_lost at 0.
TEST(JobOutput, ReadsTheProgressLineThatPstrainPrints) {
  report::ProgressLine progress(1.0);
  const auto line = progress.after_step({/*pass=*/1, /*passes=*/3, /*steps_done=*/21, /*steps=*/60,
                                         /*samples_done=*/1344, /*seconds=*/2.0});
  ASSERT_TRUE(line);
  EXPECT_TRUE(is_progress_line("[rank 1 trainer 0] " + *line)) << *line;
  JobOutput output;
  output.read_line("[rank 1 trainer 0] " + *line);
  EXPECT_EQ(output.reached().pass, 1);
  EXPECT_EQ(output.reached().step_in_pass, 21);
}

TEST(JobOutput, RecognisesProgressLinesOnly) {
  EXPECT_TRUE(is_progress_line("[rank 1 trainer 0] pass 0 of 0..2 step 21/60 (35%), 654 samples/s, pass left 2s"));
  EXPECT_FALSE(is_progress_line("[rank 1 trainer 0] pass 0: train_loss 1.08 train_accuracy 0.61"));
  EXPECT_FALSE(is_progress_line("[rank 1 trainer 0] first step done 1.37984 s after start"));
}

TEST(StepsLost, FromWhatThePreviousJobReachedToWhereTheNextResumed) {
  EXPECT_EQ(steps_lost({0, 50}, {0, 9}), 41);            // a crash 41 steps after the checkpoint
  EXPECT_EQ(steps_lost({0, 50}, {0, 50}), 0);            // a planned stop checkpoints where it stops
  EXPECT_EQ(steps_lost({0, 48}, {0, 50}), 0);            // the stop's checkpoint is past the last progress line
  EXPECT_EQ(steps_lost({0, 59}, {1, 0}), 0);             // the end-of-pass checkpoint
  EXPECT_EQ(steps_lost({2, 5}, {1, 30}), std::nullopt);  // the steps of a whole pass in between are not known
}

}  // namespace
}  // namespace pstrain::launch
