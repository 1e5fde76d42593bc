#pragma once
// Fully connected layers fc1..fcN and their workspaces, for max_batch rows: the activation after every layer but
// the last, whose output is the logits. The MLP is one stack on its input; the CNN puts one after its
// convolution blocks.
#include <cstddef>
#include <vector>

#include "compute/backend.h"
#include "nn/dense.h"
#include "nn/layer_view.h"

namespace pstrain::nn {

class DenseStack {
 public:
  // widths = {inputs, hidden..., classes}; views[i] holds fc(i+1)'s parameters.
  DenseStack(compute::Backend& backend, const std::vector<std::size_t>& widths, const std::vector<LayerView>& views,
             compute::Activation activation, std::size_t max_batch);

  std::size_t size() const { return layers_.size(); }
  // Half-width of fc(index + 1)'s initial U(-a, a) weights.
  float weight_limit(std::size_t index) const;

  // Runs every layer on `input` (rows x widths[0]); returns the logits (rows x classes).
  const float* forward(const float* input, int rows);
  // Where backward() reads dL/d logits from.
  float* logits_gradient() { return workspaces_.back().output_gradient.data(); }
  // After forward() on the same input and rows: OVERWRITES the parameter gradients and writes dL/d input into
  // input_gradient unless it is null (a network's input needs none).
  void backward(const float* input, float* input_gradient, int rows);

 private:
  // One layer's activations and their gradients, max_batch rows each.
  struct Workspace {
    compute::Buffer<float> output;              // x W^T + b (the logits for the last layer)
    compute::Buffer<float> output_gradient;     // dL/d output
    compute::Buffer<float> activated;           // activation(output); hidden layers only
    compute::Buffer<float> activated_gradient;  // dL/d activated; hidden layers only
  };

  const float* layer_input(const float* input, std::size_t layer) const {
    return layer == 0 ? input : workspaces_[layer - 1].activated.data();
  }

  compute::Backend& backend_;
  compute::Activation activation_;
  std::vector<Dense> layers_;
  std::vector<Workspace> workspaces_;
};

}  // namespace pstrain::nn
