#include "exchange/meeting_cadence.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace pstrain::exchange {
namespace {

// The meetings a loop over every step finds, one by one (what the servers walked before they looped over meetings).
std::vector<std::int64_t> meetings_step_by_step(const MeetingCadence& cadence, std::int64_t steps) {
  std::vector<std::int64_t> meetings;
  for (std::int64_t step = 0; step < steps; ++step) {
    if (cadence.meets_after(step, steps)) meetings.push_back(step);
  }
  return meetings;
}

std::vector<std::int64_t> meetings_by_next_meeting(const MeetingCadence& cadence, std::int64_t steps) {
  std::vector<std::int64_t> meetings;
  for (std::int64_t step = cadence.next_meeting(0, steps); step < steps; step = cadence.next_meeting(step + 1, steps)) {
    meetings.push_back(step);
  }
  return meetings;
}

TEST(MeetingCadence, WalkingMeetingsFindsTheStepsAStepByStepWalkMeetsAt) {
  for (std::int64_t every = 1; every <= 6; ++every) {
    for (std::int64_t steps = 0; steps <= 25; ++steps) {
      const MeetingCadence cadence{every};
      EXPECT_EQ(meetings_by_next_meeting(cadence, steps), meetings_step_by_step(cadence, steps))
          << "every " << every << ", " << steps << " steps";
    }
  }
}

TEST(MeetingCadence, EveryKthStepAndThePassesLast) {
  const MeetingCadence cadence{4};
  EXPECT_EQ(meetings_step_by_step(cadence, 10), (std::vector<std::int64_t>{3, 7, 9}));
  EXPECT_EQ(meetings_step_by_step(MeetingCadence{}, 3), (std::vector<std::int64_t>{0, 1, 2}));
}

TEST(MeetingCadence, UnknownStepsMeetOnlyOnTheCadence) {
  const MeetingCadence cadence{3};
  EXPECT_FALSE(cadence.meets_after(0, -1));
  EXPECT_TRUE(cadence.meets_after(2, -1));
  EXPECT_TRUE(MeetingCadence{}.meets_after(0, -1));
}

}  // namespace
}  // namespace pstrain::exchange
