#pragma once
// The clock pstrain times its phases with (the per-step breakdown, the exchange timers).
#include <chrono>

namespace pstrain {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace pstrain
