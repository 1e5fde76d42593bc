#pragma once
// A vector for a rank's large per-step scratch buffers (a node leader's gradient sum and receive buffers): the
// values are real and decide the step, but the memory is what a dry-run at scale cannot afford once per rank.
// Here it is std::vector; the SimGrid dry-run's build shadows this header (lib/simulation/overrides/core/) with
// an allocator that folds every simulated rank's buffers onto one block of host memory.
#include <vector>

namespace pstrain {

template <typename T>
using BulkVector = std::vector<T>;

}  // namespace pstrain
