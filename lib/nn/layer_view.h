#pragma once
// Where one layer's weight, bias and their gradients live. A layer owns no parameter memory: these are views into
// its model's flat parameter and gradient buffers (the parameter service ships those as one vector). All
// pointers are backend memory; the shapes are the layer's own (see Dense and Conv2d).
namespace pstrain::nn {

struct LayerView {
  float* weight = nullptr;
  float* bias = nullptr;             // one per output (unit or filter)
  float* weight_gradient = nullptr;  // same shape as weight
  float* bias_gradient = nullptr;    // same shape as bias
};

}  // namespace pstrain::nn
