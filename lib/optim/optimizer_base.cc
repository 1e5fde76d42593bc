#include "optim/optimizer_base.h"

#include "core/error.h"

namespace pstrain::optim {

OptimizerBase::OptimizerBase(const OptimizerConfig& config, std::size_t size, std::vector<std::uint8_t> decay_mask)
    : config_(config), size_(size), decay_mask_(std::move(decay_mask)) {
  PSTRAIN_ASSERT(decay_mask_.empty() || decay_mask_.size() == size_, "decay mask of ", decay_mask_.size(),
                 " entries for an optimizer of ", size_, " parameters");
}

std::uint64_t OptimizerBase::begin_step(std::span<const float> parameters, std::span<const float> gradients) {
  PSTRAIN_ASSERT(parameters.size() == size_ && gradients.size() == size_, name(), " optimizer built for ", size_,
                 " parameters got ", parameters.size(), " parameters and ", gradients.size(), " gradients");
  return ++steps_;
}

}  // namespace pstrain::optim
