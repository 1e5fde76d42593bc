#pragma once
// The pause between two polls that found nothing (the async server's loop, an async trainer waiting for its pushes
// to be applied or for the end-of-pass meeting), stated once for all of them.
#include <chrono>
#include <thread>

namespace pstrain {

// A zero interval yields the processor instead of sleeping: the poller answers as soon as it is scheduled again,
// and any rank sharing its processor runs in its place meanwhile. Over emulated one-sided messages (osc/pt2pt)
// nothing moves until the target polls MPI, so the async server's sleep set the pace of every push: 100 us of it
// made async 1 server + 1 trainer over TCP 3.6x slower than yielding (benchmarks/README.md, "Async polling").
inline void pause_between_polls(std::chrono::microseconds interval) {
  if (interval.count() == 0) {
    std::this_thread::yield();
  } else {
    std::this_thread::sleep_for(interval);
  }
}

}  // namespace pstrain
