// dropout rate=R (required, in [0, 1)): in training each element is zeroed with probability R and the others
// scaled by 1 / (1 - R); evaluation passes the input through. The mask comes from the counter-based generator
// (core/counter_random.h) keyed by the step's key (seed, global step, trainer) and this layer's position, so
// a re-run or a resumed job draws the same masks on any backend.
#include "core/counter_random.h"
#include "nn/layer_registry.h"

namespace pstrain::nn {

namespace {

class DropoutLayer final : public Layer {
 public:
  DropoutLayer(const LayerBuild& build, float rate)
      : backend_(build.backend),
        rate_(rate),
        index_(build.index),
        size_(element_count(build.plan.output)),
        mask_(build.backend, build.max_batch * size_) {}

  void forward(const StepContext& step, std::span<const float* const> inputs, float* output) override {
    if (!step.training || rate_ == 0.0f) {
      backend_.copy(output, inputs[0], count(step) * sizeof(float));
      return;
    }
    backend_.dropout_mask(mask_.data(), count(step), rate_, pstrain::combine_key(step.random_key, index_));
    backend_.multiply(inputs[0], mask_.data(), output, count(step));
  }

  void backward(const StepContext& step, std::span<const float* const>, const float*, const float* dy,
                std::span<float* const> input_gradients) override {
    if (input_gradients[0] == nullptr) return;
    if (!step.training || rate_ == 0.0f) {
      backend_.copy(input_gradients[0], dy, count(step) * sizeof(float));
    } else {
      backend_.multiply(dy, mask_.data(), input_gradients[0], count(step));
    }
  }

 private:
  std::size_t count(const StepContext& step) const { return static_cast<std::size_t>(step.batch) * size_; }

  compute::Backend& backend_;
  float rate_;
  std::uint64_t index_;
  std::size_t size_;
  compute::Buffer<float> mask_;  // 0 or 1 / (1 - rate) per element of the last training forward
};

}  // namespace

void register_dropout(LayerRegistry& registry) {
  registry.add({.name = "dropout",
                .summary = "drop elements with probability rate=R in [0, 1) while training",
                .plan =
                    [](LayerAttributes& attributes, const std::vector<Shape>& inputs) {
                      LayerPlan plan;
                      attributes.number("rate", 0.0f, 0.0f, 1.0f);
                      plan.output = inputs[0];
                      plan.forward_flops = static_cast<double>(element_count(inputs[0]));
                      return plan;
                    },
                .create =
                    [](const LayerBuild& build, LayerAttributes& attributes) {
                      return std::make_unique<DropoutLayer>(build, attributes.number("rate", 0.0f, 0.0f, 1.0f));
                    }});
}

}  // namespace pstrain::nn
