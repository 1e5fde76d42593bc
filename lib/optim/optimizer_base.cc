#include "optim/optimizer_base.h"

#include "core/error.h"

namespace pstrain::optim {

OptimizerBase::OptimizerBase(const OptimizerConfig& config, std::size_t size, std::vector<std::uint8_t> decay_mask)
    : config_(config), size_(size), decay_mask_(std::move(decay_mask)) {
  PSTRAIN_ASSERT(decay_mask_.empty() || decay_mask_.size() == size_, "decay mask of ", decay_mask_.size(),
                 " entries for an optimizer of ", size_, " parameters");
}

void Optimizer::step(std::span<float> parameters, std::span<const float> gradients) {
  PSTRAIN_ASSERT(parameters.size() == size() && gradients.size() == size(), name(), " optimizer built for ", size(),
                 " parameters got ", parameters.size(), " parameters and ", gradients.size(), " gradients");
  begin_update();
  update_range(0, parameters, gradients);
}

void OptimizerBase::begin_update() {
  ++steps_;
  learning_rate_ = scheduled_learning_rate(config_, steps_);
  prepare_update(steps_);
}

void OptimizerBase::update_range(std::size_t first, std::span<float> parameters, std::span<const float> gradients) {
  PSTRAIN_ASSERT(first <= size_ && parameters.size() <= size_ - first && gradients.size() == parameters.size(), name(),
                 " optimizer built for ", size_, " parameters got ", parameters.size(), " parameters and ",
                 gradients.size(), " gradients at ", first);
  update_elements(first, parameters, gradients);
}

}  // namespace pstrain::optim
