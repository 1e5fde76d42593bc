#include "exchange/exchange_stats.h"

#include <algorithm>

namespace pstrain::exchange {

void StalenessStats::record(std::int64_t staleness) {
  ++histogram[static_cast<std::size_t>(std::clamp<std::int64_t>(staleness, 0, kBuckets - 1))];
  ++count;
  sum += staleness;
  max = std::max(max, staleness);
}

std::int64_t StalenessStats::percentile(double fraction) const {
  if (count == 0) return 0;
  const auto rank = static_cast<std::int64_t>(fraction * static_cast<double>(count - 1));
  std::int64_t seen = 0;
  for (std::size_t bucket = 0; bucket < kBuckets; ++bucket) {
    seen += histogram[bucket];
    if (seen > rank) return static_cast<std::int64_t>(bucket);
  }
  return kBuckets - 1;
}

}  // namespace pstrain::exchange
