#pragma once
// The shape of a CNN, independent of any backend: the geometry of every convolution and pool, the widths of the
// fully connected layers after them, the flat parameter layout that the parameter service and checkpoints rely
// on, and the checks on a user's spec.
#include <cstddef>
#include <vector>

#include "compute/backend.h"
#include "nn/model.h"

namespace pstrain::nn {

// One convolution block: a stride-1 'same' convolution, the activation, then a 2x2/2 max-pool.
struct ConvStage {
  compute::ConvGeometry conv;  // its input
  int filters = 0;
  compute::PoolGeometry pool;  // its input: the convolution's output, filters channels
};

struct CnnShape {
  std::vector<ConvStage> stages;
  // {flattened last pool output (h * w * c), hidden..., num_classes}: the fully connected layers fc1..fcN.
  std::vector<std::size_t> dense_widths;
};

// Both throw as validate_cnn_spec does for an invalid spec.
CnnShape cnn_shape(const CnnSpec& spec);

// conv1.weight {f1, k, k, C}, conv1.bias {f1}, conv2.weight {f2, k, k, f1}, ..., then fc1.weight {h1, flat},
// fc1.bias {h1}, ..., packed back to back from offset 0.
std::vector<ParameterInfo> cnn_parameter_layout(const CnnSpec& spec);

// Throws pstrain::Error(kUsage) for a spec no network can be built from: an empty image, no convolution layer, a
// layer without filters or units, an even kernel, an image too small for the pools, fewer than 2 classes, a zero
// or too large max_batch.
void validate_cnn_spec(const CnnSpec& spec);

}  // namespace pstrain::nn
