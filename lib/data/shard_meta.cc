#include "data/shard.h"

#include "core/join_numbers.h"

namespace pstrain::data {

std::size_t ShardMeta::sample_size() const {
  // Readers reject shapes whose product overflows before anything calls this.
  std::size_t size = 1;
  for (const std::uint64_t dim : sample_shape) size *= static_cast<std::size_t>(dim);
  return size;
}

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  return shape.empty() ? "(none)" : join_numbers(shape, " x ");
}

}  // namespace pstrain::data
