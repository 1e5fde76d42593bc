#pragma once
// SimGrid dry-run build only (lib/simulation/README.md): shadows lib/core/poll_pause.h. Under SMPI a yield does
// not advance simulated time, and a loop that only polls window memory then never sees another rank's progress;
// a sleep does (smpicxx's smpi_helpers.h turns nanosleep into a simulated sleep). An interval of 0 ("yield")
// becomes the shortest simulated sleep, 1 us: the time a yielded core takes to come back, no more.
#include <algorithm>
#include <chrono>
#include <thread>

namespace pstrain {

inline void pause_between_polls(std::chrono::microseconds interval) {
  std::this_thread::sleep_for(std::max(interval, std::chrono::microseconds(1)));
}

}  // namespace pstrain
