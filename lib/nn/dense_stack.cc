#include "nn/dense_stack.h"

#include "core/error.h"
#include "nn/initialization.h"

namespace pstrain::nn {

DenseStack::DenseStack(compute::Backend& backend, const std::vector<std::size_t>& widths,
                       const std::vector<LayerView>& views, compute::Activation activation, std::size_t max_batch)
    : backend_(backend), activation_(activation) {
  PSTRAIN_ASSERT(widths.size() >= 2 && views.size() + 1 == widths.size(), views.size(), " layer views for ",
                 widths.size(), " widths");
  for (std::size_t layer = 0; layer + 1 < widths.size(); ++layer) {
    layers_.emplace_back(backend_, widths[layer], widths[layer + 1], views[layer]);
    const std::size_t rows_times_width = max_batch * widths[layer + 1];
    Workspace workspace;
    workspace.output = compute::Buffer<float>(backend_, rows_times_width);
    workspace.output_gradient = compute::Buffer<float>(backend_, rows_times_width);
    if (layer + 2 < widths.size()) {  // hidden
      workspace.activated = compute::Buffer<float>(backend_, rows_times_width);
      workspace.activated_gradient = compute::Buffer<float>(backend_, rows_times_width);
    }
    workspaces_.push_back(std::move(workspace));
  }
}

float DenseStack::weight_limit(std::size_t index) const {
  return init_limit(activation_, layers_[index].inputs(), layers_[index].outputs());
}

const float* DenseStack::forward(const float* input, int rows) {
  for (std::size_t layer = 0; layer < layers_.size(); ++layer) {
    Workspace& workspace = workspaces_[layer];
    layers_[layer].forward(layer_input(input, layer), workspace.output.data(), rows);
    if (layer + 1 < layers_.size()) {
      backend_.activation_forward(activation_, workspace.output.data(), workspace.activated.data(),
                                  static_cast<std::size_t>(rows) * layers_[layer].outputs());
    }
  }
  return workspaces_.back().output.data();
}

void DenseStack::backward(const float* input, float* input_gradient, int rows) {
  for (std::size_t layer = layers_.size(); layer-- > 0;) {
    float* layer_input_gradient = layer == 0 ? input_gradient : workspaces_[layer - 1].activated_gradient.data();
    layers_[layer].backward(layer_input(input, layer), workspaces_[layer].output_gradient.data(), layer_input_gradient,
                            rows);
    if (layer > 0) {
      Workspace& below = workspaces_[layer - 1];
      backend_.activation_backward(activation_, below.activated.data(), below.activated_gradient.data(),
                                   below.output_gradient.data(),
                                   static_cast<std::size_t>(rows) * layers_[layer - 1].outputs());
    }
  }
}

}  // namespace pstrain::nn
