// batchnorm: batch normalisation per channel (the last axis): over batch x pixels for images, over the batch for
// vectors. Training normalises with the batch's statistics and moves the running ones; evaluation uses the
// running ones. gamma starts at 1, beta at 0; running_mean at 0 and running_var at 1 (non-trainable state).
//   momentum=M (0.1, PyTorch's convention: running = (1 - M) running + M batch)  epsilon=E (1e-5)
// With several trainers each keeps its own running statistics; what the modes do with them is the model
// side's rule in graph_model.h.
#include "nn/layer_registry.h"

namespace pstrain::nn {

namespace {

constexpr float kDefaultMomentum = 0.1f;
constexpr float kDefaultEpsilon = 1e-5f;

class BatchNormLayer final : public Layer {
 public:
  BatchNormLayer(const LayerBuild& build, LayerAttributes& attributes)
      : backend_(build.backend),
        channels_(static_cast<int>(build.plan.output.back())),
        pixels_(static_cast<int>(element_count(build.plan.output) / build.plan.output.back())),
        momentum_(attributes.number("momentum", kDefaultMomentum, 0.0f, 1.0f)),
        epsilon_(attributes.number("epsilon", kDefaultEpsilon, 0.0f, 1.0f)),
        gamma_(build.parameters[0]),
        beta_(build.parameters[1]),
        batch_mean_(build.backend, static_cast<std::size_t>(channels_)),
        batch_inv_std_(build.backend, static_cast<std::size_t>(channels_)),
        tensors_{gamma_.value, beta_.value, build.state[0], build.state[1], batch_mean_.data(), batch_inv_std_.data()} {
  }

  void forward(const StepContext& step, std::span<const float* const> inputs, float* output) override {
    if (step.training) {
      backend_.batch_norm_training(inputs[0], output, tensors_, momentum_, epsilon_, rows(step), channels_);
    } else {
      backend_.batch_norm_inference(inputs[0], output, tensors_, epsilon_, rows(step), channels_);
    }
  }

  void backward(const StepContext& step, std::span<const float* const> inputs, const float*, const float* dy,
                std::span<float* const> input_gradients) override {
    // The input gradient is needed for dgamma and dbeta anyway (they share the reductions): without a caller's
    // buffer it goes to the layer's own.
    float* dx = input_gradients[0];
    if (dx == nullptr) {
      if (spare_.size() == 0)
        spare_ = compute::Buffer<float>(backend_, static_cast<std::size_t>(rows(step)) * channels_);
      dx = spare_.data();
    }
    backend_.batch_norm_backward(inputs[0], dy, tensors_, dx, gamma_.gradient, beta_.gradient, rows(step), channels_);
  }

 private:
  int rows(const StepContext& step) const { return step.batch * pixels_; }

  compute::Backend& backend_;
  int channels_;
  int pixels_;
  float momentum_;
  float epsilon_;
  ParameterView gamma_;
  ParameterView beta_;
  compute::Buffer<float> batch_mean_;
  compute::Buffer<float> batch_inv_std_;
  compute::Backend::BatchNormTensors tensors_;
  compute::Buffer<float> spare_;
};

LayerPlan plan_batchnorm(LayerAttributes& attributes, const std::vector<Shape>& inputs) {
  attributes.number("momentum", kDefaultMomentum, 0.0f, 1.0f);
  attributes.number("epsilon", kDefaultEpsilon, 0.0f, 1.0f);
  const Shape& input = inputs[0];
  if (input.size() != 1 && !is_image(input)) {
    attributes.fail(cat("needs a flat or an image input, got ", to_string(input)));
  }
  const std::size_t channels = input.back();
  LayerPlan plan;
  plan.output = input;
  plan.parameters = {{"gamma", {channels}, {InitRule::Kind::kOnes, 0}}, {"beta", {channels}, {}}};
  plan.state = {{"running_mean", {channels}, {}}, {"running_var", {channels}, {InitRule::Kind::kOnes, 0}}};
  plan.forward_flops = 4.0 * static_cast<double>(element_count(input));
  return plan;
}

}  // namespace

void register_batchnorm(LayerRegistry& registry) {
  registry.add({.name = "batchnorm",
                .summary = "batch normalisation per channel: [momentum=0.1] [epsilon=1e-5]",
                .plan = plan_batchnorm,
                .create = [](const LayerBuild& build, LayerAttributes& attributes) {
                  return std::make_unique<BatchNormLayer>(build, attributes);
                }});
}

}  // namespace pstrain::nn
