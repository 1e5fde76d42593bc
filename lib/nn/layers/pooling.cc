// Pooling over NHWC images, per channel:
//   maxpool window=W (2) stride=S (W)   the maximum of each window (the first one on ties)
//   avgpool window=W (2) stride=S (W)   the mean of each window
//   global_avgpool                      the mean over all pixels: height x width x C -> C
// Windows never hang over the image's edge: the output is floor((size - W) / S) + 1 per axis.
#include "nn/layer_registry.h"

namespace pstrain::nn {

namespace {

compute::PoolGeometry pool_geometry(const Shape& input, LayerAttributes& attributes) {
  compute::PoolGeometry g;
  g.height = static_cast<int>(input[0]);
  g.width = static_cast<int>(input[1]);
  g.channels = static_cast<int>(input[2]);
  g.window = static_cast<int>(attributes.positive("window", 2));
  g.stride = static_cast<int>(attributes.positive("stride", static_cast<std::size_t>(g.window)));
  return g;
}

void require_image(LayerAttributes& attributes, const Shape& input) {
  if (!is_image(input))
    attributes.fail(cat("needs an image input (height x width x channels), got ", to_string(input)));
}

LayerPlan plan_window_pool(LayerAttributes& attributes, const std::vector<Shape>& inputs) {
  require_image(attributes, inputs[0]);
  const compute::PoolGeometry g = pool_geometry(inputs[0], attributes);
  if (g.window > g.height || g.window > g.width) {
    attributes.fail(cat("a ", g.window, "x", g.window, " window does not fit the ", to_string(inputs[0]), " input"));
  }
  LayerPlan plan;
  plan.output = {static_cast<std::size_t>(g.out_height()), static_cast<std::size_t>(g.out_width()),
                 static_cast<std::size_t>(g.channels)};
  plan.forward_flops = static_cast<double>(element_count(plan.output)) * g.window * g.window;
  return plan;
}

class MaxPoolLayer final : public Layer {
 public:
  MaxPoolLayer(const LayerBuild& build, LayerAttributes& attributes)
      : backend_(build.backend),
        geometry_(pool_geometry(build.inputs[0], attributes)),
        argmax_(build.backend, build.max_batch * element_count(build.plan.output)) {}

  void forward(const StepContext& step, std::span<const float* const> inputs, float* output) override {
    backend_.max_pool_forward(inputs[0], output, argmax_.data(), geometry_, step.batch);
  }
  void backward(const StepContext& step, std::span<const float* const>, const float*, const float* dy,
                std::span<float* const> input_gradients) override {
    if (input_gradients[0] != nullptr) {
      backend_.max_pool_backward(dy, argmax_.data(), input_gradients[0], geometry_, step.batch);
    }
  }

 private:
  compute::Backend& backend_;
  compute::PoolGeometry geometry_;
  compute::Buffer<std::int32_t> argmax_;  // where each output came from
};

class AvgPoolLayer final : public Layer {
 public:
  AvgPoolLayer(const LayerBuild& build, LayerAttributes& attributes)
      : backend_(build.backend), geometry_(pool_geometry(build.inputs[0], attributes)) {}

  void forward(const StepContext& step, std::span<const float* const> inputs, float* output) override {
    backend_.avg_pool_forward(inputs[0], output, geometry_, step.batch);
  }
  void backward(const StepContext& step, std::span<const float* const>, const float*, const float* dy,
                std::span<float* const> input_gradients) override {
    if (input_gradients[0] != nullptr) backend_.avg_pool_backward(dy, input_gradients[0], geometry_, step.batch);
  }

 private:
  compute::Backend& backend_;
  compute::PoolGeometry geometry_;
};

class GlobalAvgPoolLayer final : public Layer {
 public:
  explicit GlobalAvgPoolLayer(const LayerBuild& build)
      : backend_(build.backend),
        pixels_(static_cast<int>(build.inputs[0][0] * build.inputs[0][1])),
        channels_(static_cast<int>(build.inputs[0][2])) {}

  void forward(const StepContext& step, std::span<const float* const> inputs, float* output) override {
    backend_.spatial_mean(inputs[0], output, step.batch, pixels_, channels_);
  }
  void backward(const StepContext& step, std::span<const float* const>, const float*, const float* dy,
                std::span<float* const> input_gradients) override {
    if (input_gradients[0] != nullptr) {
      backend_.spatial_mean_backward(dy, input_gradients[0], step.batch, pixels_, channels_);
    }
  }

 private:
  compute::Backend& backend_;
  int pixels_;
  int channels_;
};

}  // namespace

void register_pooling(LayerRegistry& registry) {
  registry.add({.name = "maxpool",
                .summary = "max pooling (NHWC): [window=2] [stride=window]",
                .plan = plan_window_pool,
                .create = [](const LayerBuild& build, LayerAttributes& attributes) {
                  return std::make_unique<MaxPoolLayer>(build, attributes);
                }});
  registry.add({.name = "avgpool",
                .summary = "average pooling (NHWC): [window=2] [stride=window]",
                .plan = plan_window_pool,
                .create = [](const LayerBuild& build, LayerAttributes& attributes) {
                  return std::make_unique<AvgPoolLayer>(build, attributes);
                }});
  registry.add({.name = "global_avgpool",
                .summary = "mean over all pixels: HxWxC -> C",
                .plan =
                    [](LayerAttributes& attributes, const std::vector<Shape>& inputs) {
                      require_image(attributes, inputs[0]);
                      LayerPlan plan;
                      plan.output = {inputs[0][2]};
                      plan.forward_flops = static_cast<double>(element_count(inputs[0]));
                      return plan;
                    },
                .create = [](const LayerBuild& build,
                             LayerAttributes&) { return std::make_unique<GlobalAvgPoolLayer>(build); }});
}

}  // namespace pstrain::nn
