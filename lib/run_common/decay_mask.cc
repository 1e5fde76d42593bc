#include "run_common/decay_mask.h"

#include <algorithm>

#include "core/error.h"

namespace pstrain::run_common {

std::vector<std::uint8_t> decay_mask(const optim::OptimizerConfig& config,
                                     const std::vector<nn::ParameterInfo>& parameters, const ps::ShardPlan& plan,
                                     int shard) {
  if (config.decay_bias_and_norm || config.weight_decay == 0.0f) return {};
  std::vector<std::uint8_t> full(plan.total_size(), 0);
  for (const nn::ParameterInfo& parameter : parameters) {
    PSTRAIN_ASSERT(parameter.offset + parameter.size <= full.size(), parameter.name, " ends at ",
                   parameter.offset + parameter.size, " past the flat vector of ", full.size());
    if (optim::decays(parameter.name)) {
      std::fill_n(full.begin() + static_cast<std::ptrdiff_t>(parameter.offset), parameter.size, std::uint8_t{1});
    }
  }
  std::vector<std::uint8_t> slice(plan.shard_size(shard), 0);
  for (const ps::Segment& segment : plan.segments(shard)) {
    std::copy_n(full.begin() + static_cast<std::ptrdiff_t>(segment.global_offset), segment.length,
                slice.begin() + static_cast<std::ptrdiff_t>(segment.local_offset));
  }
  return slice;
}

}  // namespace pstrain::run_common
