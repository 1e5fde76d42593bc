// The progress line's schedule and arithmetic, with the pass clock given by the test (no waiting).
#include <gtest/gtest.h>

#include "report/progress_line.h"

namespace pstrain::report {
namespace {

PassPosition at(int pass, std::int64_t done, double seconds, std::int64_t steps = 100) {
  return PassPosition{.pass = pass,
                      .passes = 3,
                      .steps_done = done,
                      .steps = steps,
                      .samples_done = 64.0 * static_cast<double>(done),
                      .seconds = seconds};
}

TEST(ProgressLine, OneLinePerIntervalAndNoneInAPassShorterThanTheInterval) {
  ProgressLine progress(10.0);
  int lines = 0;
  for (int step = 1; step <= 100; ++step) {  // pass 0: 0.25 s per step, 25 s in all
    if (progress.after_step(at(0, step, 0.25 * step))) ++lines;
  }
  EXPECT_EQ(lines, 2) << "lines at 10 s and 20 s";
  for (int step = 1; step <= 100; ++step) {  // pass 1: 9.9 s in all
    EXPECT_FALSE(progress.after_step(at(1, step, 0.099 * step))) << step;
  }
}

TEST(ProgressLine, ANewPassRestartsTheSchedule) {
  ProgressLine progress(10.0);
  EXPECT_TRUE(progress.after_step(at(0, 50, 12.0)));
  EXPECT_FALSE(progress.after_step(at(1, 1, 0.5)));
  EXPECT_FALSE(progress.after_step(at(1, 19, 9.9)));
  EXPECT_TRUE(progress.after_step(at(1, 20, 10.0)));
}

TEST(ProgressLine, ASlowStepDelaysTheNextLineInsteadOfBunchingLines) {
  ProgressLine progress(10.0);
  EXPECT_TRUE(progress.after_step(at(0, 10, 35.0)));  // one step took 35 s
  EXPECT_FALSE(progress.after_step(at(0, 11, 36.0)));
  EXPECT_FALSE(progress.after_step(at(0, 12, 44.9)));
  EXPECT_TRUE(progress.after_step(at(0, 13, 45.0)));
}

TEST(ProgressLine, StepsRateAndTimeLeftAgainstHandComputedValues) {
  ProgressLine progress(10.0);
  // 40 of 100 steps in 20 s: 0.5 s per step, 128 samples/s; 30 s left in pass 1 of 3, then one more pass of 50 s.
  const auto line = progress.after_step(at(1, 40, 20.0));
  ASSERT_TRUE(line);
  EXPECT_EQ(*line, "pass 1 of 0..2 step 40/100 (40%), 128 samples/s, pass left 30s, run left ~1m20s");
}

TEST(ProgressLine, DynamicDispatchHasNoStepCountAndNoEstimate) {
  ProgressLine progress(5.0);
  const auto line = progress.after_step(at(2, 30, 6.0, -1));
  ASSERT_TRUE(line);
  EXPECT_EQ(*line, "pass 2 of 0..2 step 30, 320 samples/s");
}

TEST(ProgressLine, ZeroIntervalIsOff) {
  ProgressLine progress(0.0);
  for (int step = 1; step <= 10; ++step) EXPECT_FALSE(progress.after_step(at(0, step, 1000.0 * step)));
}

TEST(FormatDuration, SecondsMinutesHours) {
  EXPECT_EQ(format_duration(0.4), "0s");
  EXPECT_EQ(format_duration(42.0), "42s");
  EXPECT_EQ(format_duration(59.6), "1m00s");
  EXPECT_EQ(format_duration(185.0), "3m05s");
  EXPECT_EQ(format_duration(7620.0), "2h07m");
  EXPECT_EQ(format_duration(-3.0), "0s");
}

}  // namespace
}  // namespace pstrain::report
