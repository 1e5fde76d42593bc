// Layers that act on each element alone and keep the shape:
//   relu, tanh, sigmoid   the activation (backward from the output: relu' = [y > 0], tanh' = 1 - y^2, ...)
//   scale factor=F        y = F x (the seed's ResNet scales its logits by 0.125)
//   flatten               any shape -> {element count}; NHWC data are already in (h, w, c) order
#include "nn/layer_registry.h"

namespace pstrain::nn {

namespace {

LayerPlan same_shape(const Shape& input, double flops_per_element) {
  LayerPlan plan;
  plan.output = input;
  plan.forward_flops = flops_per_element * static_cast<double>(element_count(input));
  return plan;
}

class ActivationLayer final : public Layer {
 public:
  ActivationLayer(const LayerBuild& build, compute::Activation activation)
      : backend_(build.backend), activation_(activation), size_(element_count(build.plan.output)) {}

  void forward(const StepContext& step, std::span<const float* const> inputs, float* output) override {
    backend_.activation_forward(activation_, inputs[0], output, count(step));
  }
  void backward(const StepContext& step, std::span<const float* const>, const float* output, const float* dy,
                std::span<float* const> input_gradients) override {
    if (input_gradients[0] != nullptr) {
      backend_.activation_backward(activation_, output, dy, input_gradients[0], count(step));
    }
  }

 private:
  std::size_t count(const StepContext& step) const { return static_cast<std::size_t>(step.batch) * size_; }

  compute::Backend& backend_;
  compute::Activation activation_;
  std::size_t size_;
};

// y = factor * x, and flatten with factor 1 (a copy: the graph gives every node its own buffers).
class ScaleLayer final : public Layer {
 public:
  ScaleLayer(const LayerBuild& build, float factor)
      : backend_(build.backend), factor_(factor), size_(element_count(build.plan.output)) {}

  void forward(const StepContext& step, std::span<const float* const> inputs, float* output) override {
    backend_.copy(output, inputs[0], bytes(step));
    if (factor_ != 1.0f) backend_.scale(output, count(step), factor_);
  }
  void backward(const StepContext& step, std::span<const float* const>, const float*, const float* dy,
                std::span<float* const> input_gradients) override {
    if (input_gradients[0] == nullptr) return;
    backend_.copy(input_gradients[0], dy, bytes(step));
    if (factor_ != 1.0f) backend_.scale(input_gradients[0], count(step), factor_);
  }

 private:
  std::size_t count(const StepContext& step) const { return static_cast<std::size_t>(step.batch) * size_; }
  std::size_t bytes(const StepContext& step) const { return count(step) * sizeof(float); }

  compute::Backend& backend_;
  float factor_;
  std::size_t size_;
};

void register_activation(LayerRegistry& registry, const std::string& name, compute::Activation activation) {
  registry.add(
      {.name = name,
       .summary = cat("the ", name, " activation"),
       .plan = [](LayerAttributes&, const std::vector<Shape>& inputs) { return same_shape(inputs[0], 1); },
       .create = [activation](const LayerBuild& build,
                              LayerAttributes&) { return std::make_unique<ActivationLayer>(build, activation); }});
}

}  // namespace

void register_elementwise(LayerRegistry& registry) {
  register_activation(registry, "relu", compute::Activation::kRelu);
  register_activation(registry, "tanh", compute::Activation::kTanh);
  register_activation(registry, "sigmoid", compute::Activation::kSigmoid);
  registry.add({.name = "scale",
                .summary = "multiply by a constant: factor=F",
                .plan =
                    [](LayerAttributes& attributes, const std::vector<Shape>& inputs) {
                      attributes.number("factor", 1.0f, -1e30f, 1e30f);
                      return same_shape(inputs[0], 1);
                    },
                .create =
                    [](const LayerBuild& build, LayerAttributes& attributes) {
                      return std::make_unique<ScaleLayer>(build, attributes.number("factor", 1.0f, -1e30f, 1e30f));
                    }});
  registry.add(
      {.name = "flatten",
       .summary = "any shape -> one vector (h, w, c order)",
       .reshapes_only = true,
       .gradient_passes_through = true,
       .plan =
           [](LayerAttributes&, const std::vector<Shape>& inputs) {
             LayerPlan plan;
             plan.output = {element_count(inputs[0])};
             return plan;
           },
       .create = [](const LayerBuild& build, LayerAttributes&) { return std::make_unique<ScaleLayer>(build, 1.0f); }});
}

}  // namespace pstrain::nn
