#pragma once
// From a search space to the numbered hyperparameter sets (set 1 is the first).
#include <cstdint>
#include <vector>

#include "sweep/search_space.h"
#include "sweep/sets.h"

namespace pstrain::sweep {

// The cartesian product of the [grid] entries, the last entry varying fastest, each with the [fixed] flags first.
// Throws Error(kUsage) when the space has no [grid] entries or has [random] ones (they need `random`).
std::vector<HyperparameterSet> expand_grid(const SearchSpace& space);

// `trials` draws from the [random] entries, with every [grid] entry drawn as a uniform choice. The draws depend
// only on `seed` and the file (mt19937_64 and the mapping in expand.cc, not std::*_distribution whose output
// differs between standard libraries), so the same command gives the same sets on every machine.
std::vector<HyperparameterSet> expand_random(const SearchSpace& space, int trials, std::uint64_t seed);

// Maps one 64-bit draw to [0, 1) with 53 bits (exposed for tests).
double unit_interval(std::uint64_t bits);

}  // namespace pstrain::sweep
