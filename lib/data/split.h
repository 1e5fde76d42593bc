#pragma once
// Cutting a set of samples into shards and subsets.
#include <cstddef>
#include <vector>

#include "data/shard.h"

namespace pstrain::data {

// Splits into `parts` contiguous pieces in order whose sizes differ by at most one (the first
// count % parts pieces get the extra sample). Throws Error(kUsage) when parts is 0 or exceeds the sample
// count, since every shard must hold at least one sample.
std::vector<Samples> split_samples(const Samples& samples, std::size_t parts);

// The first n samples (all of them when n equals the count). Throws Error(kUsage) when n is 0 or larger
// than the sample count.
Samples take_first(const Samples& samples, std::size_t n);

}  // namespace pstrain::data
