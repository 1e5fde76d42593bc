#pragma once
// Each mode's exchange, built from ModeInputs by the one builder its row in builders.cc names: pstrain's job and the
// dry-run build every mode the same. The mode's traits (traits.h) say what the rest of pstrain does for it.
#include <memory>

#include "exchange/gradient_exchange.h"
#include "modes/mode_inputs.h"
#include "modes/traits.h"

namespace pstrain::modes {

// The exchange a trainer of a job with more than one rank steps with in `mode`. Collective over the trainers where
// the mode sets up a communicator (node aggregation's push groups, all-reduce with NCCL).
std::unique_ptr<exchange::GradientExchange> make_mode_exchange(Mode mode, const ModeInputs& inputs);
// Local training (a job of one rank): the trainer runs the restored optimizer on its own parameters.
std::unique_ptr<exchange::GradientExchange> make_local_training(const ModeInputs& inputs);

}  // namespace pstrain::modes
