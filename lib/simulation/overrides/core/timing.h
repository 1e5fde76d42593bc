#pragma once
// SimGrid dry-run build only (lib/simulation/README.md): this folder comes first on the include path of every
// library the simulated ranks run, so lib/'s `#include "core/timing.h"` finds this file instead of
// lib/core/timing.h. Under SMPI std::chrono::steady_clock is the host's real time, while the ranks live in
// simulated time; the exchanges' step breakdown (push, barrier, pull, ...) and the servers' busy time must be
// simulated seconds. clock_gettime is SMPI's simulated clock here (smpicxx's smpi_helpers.h redirects it).
#include <time.h>

#include <chrono>

namespace pstrain {

struct SimulatedClock {
  using duration = std::chrono::nanoseconds;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<SimulatedClock>;
  static constexpr bool is_steady = true;
  static time_point now() {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return time_point(duration(static_cast<rep>(now.tv_sec) * 1000000000 + now.tv_nsec));
  }
};

using Clock = SimulatedClock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace pstrain
