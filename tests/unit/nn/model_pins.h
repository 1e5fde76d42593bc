#pragma once
// The models whose trained parameters test_model_pins.cc pins: the default MLP (784-256-128-10) and the default
// CNN (28x28x1, conv 32 and 64, fc 128, 10 classes), as pstrain's --model mlp and --model cnn build them.
#include <memory>

#include "compute/backend.h"
#include "nn/model.h"

namespace pstrain::nn::testing {

inline std::unique_ptr<Model> pinned_mlp(compute::Backend& backend, compute::Activation activation) {
  return make_mlp(backend, {.input_size = 784,
                            .hidden = {256, 128},
                            .num_classes = 10,
                            .activation = activation,
                            .max_batch = 16});
}

inline std::unique_ptr<Model> pinned_cnn(compute::Backend& backend, compute::Activation activation) {
  CnnSpec spec;
  spec.activation = activation;
  spec.max_batch = 16;
  return make_cnn(backend, spec);
}

}  // namespace pstrain::nn::testing
