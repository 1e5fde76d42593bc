#pragma once
// Local training (one rank): no exchange at all, the trainer runs the optimizer on its own parameters.
#include <memory>
#include <span>

#include "exchange/gradient_exchange.h"
#include "optim/optimizer.h"

namespace pstrain::exchange {

std::unique_ptr<GradientExchange> make_local_exchange(std::unique_ptr<optim::Optimizer> optimizer,
                                                      std::span<const float> initial);

}  // namespace pstrain::exchange
