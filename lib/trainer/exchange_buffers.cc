#include "trainer/exchange_buffers.h"

#include <chrono>

#include "core/timing.h"

namespace pstrain::trainer {

ExchangeBuffers::ExchangeBuffers(compute::Backend& backend, nn::Model& model)
    : backend_(backend),
      model_(model),
      in_place_(!model.host_parameters().empty()),
      parameter_mirror_(backend, in_place_ ? 0 : model.parameter_count()),
      gradient_mirror_(backend, in_place_ ? 0 : model.parameter_count()),
      parameters_(in_place_ ? model.host_parameters() : parameter_mirror_.span()),
      gradient_(in_place_ ? model.host_gradients() : gradient_mirror_.span()) {}

double ExchangeBuffers::fetch_gradient() {
  if (in_place_) return 0;
  const auto start = Clock::now();
  model_.get_gradients(gradient_mirror_.span());
  return seconds_since(start);
}

double ExchangeBuffers::publish_parameters() {
  if (in_place_) return 0;
  const auto start = Clock::now();
  model_.set_parameters(parameters_);
  // From staging memory the copy may still be in flight, and the exchange writes `parameters` next (a pull at the
  // end of the pass). Nothing is lost by waiting: the next batch needs these parameters anyway.
  backend_.synchronize();
  return seconds_since(start);
}

}  // namespace pstrain::trainer
