#include "optim/optimizer_base.h"

#include "core/error.h"

namespace pstrain::optim {

std::uint64_t OptimizerBase::begin_step(std::span<const float> parameters, std::span<const float> gradients) {
  PSTRAIN_ASSERT(parameters.size() == size_ && gradients.size() == size_, name(), " optimizer built for ", size_,
                 " parameters got ", parameters.size(), " parameters and ", gradients.size(), " gradients");
  return ++steps_;
}

}  // namespace pstrain::optim
