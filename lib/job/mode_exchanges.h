#pragma once
// The gradient exchange each mode of config/modes.h builds for its trainers, registered beside the exchanges (one row
// per mode in mode_exchanges.cc), so that the traits in modes.cc stay free of them.
#include <memory>

#include "config/train_config.h"
#include "exchange/gradient_exchange.h"

namespace pstrain::train {

struct JobContext;
struct ExchangeParts;

using ExchangeMaker = std::unique_ptr<exchange::GradientExchange> (*)(const JobContext&, const ExchangeParts&);

// The maker of `mode`'s exchange for a trainer of a job with more than one rank.
ExchangeMaker exchange_maker(Mode mode);

}  // namespace pstrain::train
