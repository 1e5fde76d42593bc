#include "data/ctr/hyperloglog.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "core/counter_random.h"

namespace pstrain::data::ctr {

void HyperLogLog::add(std::uint64_t id) {
  // Ids are anything but uniform (Criteo's are hashes already, MovieLens's small integers): mixed first.
  const std::uint64_t hash = mix64(id);
  const std::uint64_t index = hash >> (64 - kPrecision);
  const std::uint64_t rest = hash << kPrecision;
  const auto rank = static_cast<std::uint8_t>(rest == 0 ? 64 - kPrecision + 1 : std::countl_zero(rest) + 1);
  registers_[index] = std::max(registers_[index], rank);
}

void HyperLogLog::merge(const HyperLogLog& other) {
  for (std::size_t i = 0; i < registers_.size(); ++i) registers_[i] = std::max(registers_[i], other.registers_[i]);
}

double HyperLogLog::estimate() const {
  const auto m = static_cast<double>(registers_.size());
  double sum = 0;
  std::size_t zeros = 0;
  for (const std::uint8_t rank : registers_) {
    sum += std::ldexp(1.0, -rank);
    zeros += rank == 0;
  }
  const double alpha = 0.7213 / (1 + 1.079 / m);
  const double raw = alpha * m * m / sum;
  if (raw <= 2.5 * m && zeros > 0) return m * std::log(m / static_cast<double>(zeros));
  return raw;  // 64-bit hashes: no large-range correction needed
}

}  // namespace pstrain::data::ctr
