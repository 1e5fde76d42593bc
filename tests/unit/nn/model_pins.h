#pragma once
// The models whose trained parameters test_model_pins.cc pins: the default MLP (784-256-128-10) and the default
// CNN (28x28x1, conv 32 and 64, fc 128, 10 classes), as pstrain's --model mlp and --model cnn build them, and a
// small --model nplm (Bengio et al.'s network with direct connections: embedding, tanh hidden layer, two output
// products added, a softmax over the vocabulary), pinned since its softmax rows became vector kernels.
#include <memory>

#include "compute/backend.h"
#include "nn/graph_model.h"
#include "nn/model.h"
#include "nn/model_plan.h"
#include "nn/model_spec.h"
#include "nn/presets.h"

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

// 4 context ids over a vocabulary of 1000 (62 vector blocks of the softmax row and a tail of 8), m=8, h=12.
inline constexpr std::size_t kPinnedVocabulary = 1000;

inline std::unique_ptr<Model> pinned_nplm(compute::Backend& backend) {
  PresetOptions options;
  options.name = "nplm";
  options.vocab = kPinnedVocabulary;
  options.classes = kPinnedVocabulary;
  options.embedding_dim = 8;
  options.hidden = {12};
  options.direct = true;
  return make_graph_model(backend,
                          plan_model(parse_model_text(preset_text(options), "preset nplm"), {4}, kPinnedVocabulary), 16,
                          0.0f);
}

}  // namespace pstrain::nn::testing
