#pragma once
// The vectors the exchange works on. On a host backend they are the model's own buffers (no copy per step);
// otherwise host mirrors copied to and from the device, in the backend's staging memory (page-locked on a GPU:
// the copies run at full speed and the one-sided push/pull reads and writes them directly).
#include <span>
#include <vector>

#include "compute/backend.h"
#include "nn/model.h"

namespace pstrain::trainer {

class ExchangeBuffers {
 public:
  ExchangeBuffers(compute::Backend& backend, nn::Model& model);

  // The parameters the exchange fills; the model computes on them once published.
  std::span<float> parameters() const { return parameters_; }
  // The model's gradient as of the last fetch_gradient().
  std::span<const float> gradient() const { return gradient_; }
  // Zeros: the gradient of a sync step without samples (made at the first such step: a model's worth of memory
  // that a run whose every step has samples never needs).
  std::span<const float> no_gradient() {
    if (no_gradient_.empty()) no_gradient_.assign(model_.parameter_count(), 0.0f);
    return no_gradient_;
  }

  // Copies the model's gradient to the host mirror; returns the seconds it took (0: in place, nothing to copy).
  double fetch_gradient();
  // Hands parameters() to the model (a copy to the device, waited for); returns the seconds it took.
  double publish_parameters();

 private:
  compute::Backend& backend_;
  nn::Model& model_;
  bool in_place_;
  compute::StagingBuffer<float> parameter_mirror_;
  compute::StagingBuffer<float> gradient_mirror_;
  std::vector<float> no_gradient_;
  std::span<float> parameters_;
  std::span<const float> gradient_;
};

}  // namespace pstrain::trainer
