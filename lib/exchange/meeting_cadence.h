#pragma once
// Where the ranks meet within a pass: after every `every`-th step (counted from where the run entered the pass)
// and after the pass's last. Every mode meets after every step (every = 1) except those whose trainers step alone
// between meetings (--mode geo: every --geo-steps). The mode states its cadence (modes/traits.h
// meeting_cadence); the run's schedule answers with it (run_common/run_schedule.h), the servers loop over its meetings
// and the mode's exchange meets where it says. Flags are agreed, and checkpoints written, only at meetings, so a
// mid-pass checkpoint is always at a meeting, and a run resumed from it meets where the first run did.
#include <algorithm>
#include <cstdint>

namespace pstrain::exchange {

struct MeetingCadence {
  std::int64_t every = 1;

  // Whether the ranks meet after step `step` (from 0) of `steps` (-1: unknown ahead, dynamic dispatch).
  bool meets_after(std::int64_t step, std::int64_t steps) const {
    return (step + 1) % every == 0 || (steps >= 0 && step + 1 >= steps);
  }
  // The first step at or after `step` after which the ranks meet, of `steps` (known); `steps` when none is left.
  std::int64_t next_meeting(std::int64_t step, std::int64_t steps) const {
    if (step >= steps) return steps;
    const std::int64_t aligned = (step + 1 + every - 1) / every * every - 1;
    return std::min(aligned, steps - 1);
  }
};

}  // namespace pstrain::exchange
