#pragma once
// Communication behind computation: during a training step the model tells a listener (a parameter-server run's
// exchange: ps/block_stream.h in sync steps, ps/push_stream.h in async ones) which parts of the flat parameter
// vector it is done with, and asks before it reads a part, so that gradients travel while the backward pass goes
// on below them and the next step's parameters arrive while the forward pass works on the layers before them.
//
// Ranges are [offset, offset + size) of the flat layout (model.h). A training step calls:
//   before_forward on the parameters of each layer, in forward order, before the layer reads them;
//   after_backward once for every element of every parameter the step trains, in backward order, as soon as
//   its gradient is final and the step reads its value no more.
// A layer may report its parameters in parts (a dense layer's weight rows, block by block: nn/layer.h
// Layer::streams_parameters); the graph reports every other layer's parameters whole.
#include <cstddef>

namespace pstrain::nn {

class ParameterStream {
 public:
  virtual ~ParameterStream() = default;
  // Returns once the values in the range hold what this step computes on.
  virtual void before_forward(std::size_t offset, std::size_t size) = 0;
  // The gradient in the range is final; the values there may change from now on.
  virtual void after_backward(std::size_t offset, std::size_t size) = 0;
};

}  // namespace pstrain::nn
