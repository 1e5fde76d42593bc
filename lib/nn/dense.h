#pragma once
// A fully connected layer, y = x W^T + b, with W stored {outputs, inputs} as in PyTorch.
//
// The layer owns no memory: its weight, bias and their gradients are views into the model's flat parameter and
// gradient buffers (the parameter service ships those as one vector), and activations belong to the caller's
// workspace. All pointers are backend memory.
#include <cstddef>

#include "compute/backend.h"
#include "nn/layer_view.h"

namespace pstrain::nn {

using DenseView = LayerView;  // weight outputs x inputs, bias outputs

class Dense {
 public:
  Dense(compute::Backend& backend, std::size_t inputs, std::size_t outputs, DenseView view);

  std::size_t inputs() const { return inputs_; }
  std::size_t outputs() const { return outputs_; }

  // y (batch x outputs) = x (batch x inputs) W^T + b.
  void forward(const float* x, float* y, int batch) const;

  // Given dy = dL/dy for the x of the matching forward call: OVERWRITES dW = dy^T x and db = sum over rows of
  // dy, and writes dx = dy W unless dx is null (the first layer's input needs no gradient).
  void backward(const float* x, const float* dy, float* dx, int batch);

 private:
  compute::Backend& backend_;
  int inputs_;
  int outputs_;
  DenseView view_;
};

}  // namespace pstrain::nn
