#pragma once
// The shape of an MLP, independent of any backend: its layer widths, the flat parameter layout that the
// parameter service and checkpoints rely on, and the checks on a user's spec.
#include <cstddef>
#include <vector>

#include "nn/model.h"

namespace pstrain::nn {

// {input_size, hidden..., num_classes}.
std::vector<std::size_t> mlp_layer_widths(const MlpSpec& spec);

// fc1.weight {w1, w0}, fc1.bias {w1}, fc2.weight {w2, w1}, ... packed back to back from offset 0.
std::vector<ParameterInfo> dense_parameter_layout(const std::vector<std::size_t>& widths);

// Throws pstrain::Error(kUsage) for a spec no model can be built from.
void validate_mlp_spec(const MlpSpec& spec);

}  // namespace pstrain::nn
