// Layers that join several inputs (named with inputs=A,B,...):
//   add      the element-wise sum of inputs of one shape (residual connections)
//   concat   concatenation along the last axis (channels of NHWC images, features of vectors); every other
//            axis must agree
#include "nn/layer_registry.h"

namespace pstrain::nn {

namespace {

class AddLayer final : public Layer {
 public:
  explicit AddLayer(const LayerBuild& build) : backend_(build.backend), size_(element_count(build.plan.output)) {}

  void forward(const StepContext& step, std::span<const float* const> inputs, float* output) override {
    // One pass for the first two (same bits as copy + axpy(1): a + b rounds once either way), then in order.
    if (inputs.size() == 1) {
      backend_.copy(output, inputs[0], count(step) * sizeof(float));
      return;
    }
    backend_.add(inputs[0], inputs[1], output, count(step));
    for (std::size_t i = 2; i < inputs.size(); ++i) backend_.axpy(1.0f, inputs[i], output, count(step));
  }
  void backward(const StepContext& step, std::span<const float* const>, const float*, const float* dy,
                std::span<float* const> input_gradients) override {
    for (float* gradient : input_gradients) {
      if (gradient != nullptr) backend_.copy(gradient, dy, count(step) * sizeof(float));
    }
  }

 private:
  std::size_t count(const StepContext& step) const { return static_cast<std::size_t>(step.batch) * size_; }

  compute::Backend& backend_;
  std::size_t size_;
};

class ConcatLayer final : public Layer {
 public:
  explicit ConcatLayer(const LayerBuild& build)
      : backend_(build.backend),
        rows_per_sample_(static_cast<int>(element_count(build.plan.output) / build.plan.output.back())),
        total_(static_cast<int>(build.plan.output.back())) {
    for (const Shape& input : build.inputs) widths_.push_back(static_cast<int>(input.back()));
  }

  void forward(const StepContext& step, std::span<const float* const> inputs, float* output) override {
    int offset = 0;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      backend_.copy_columns(inputs[i], widths_[i], output + offset, total_, rows(step), widths_[i]);
      offset += widths_[i];
    }
  }
  void backward(const StepContext& step, std::span<const float* const>, const float*, const float* dy,
                std::span<float* const> input_gradients) override {
    int offset = 0;
    for (std::size_t i = 0; i < input_gradients.size(); ++i) {
      if (input_gradients[i] != nullptr) {
        backend_.copy_columns(dy + offset, total_, input_gradients[i], widths_[i], rows(step), widths_[i]);
      }
      offset += widths_[i];
    }
  }

 private:
  int rows(const StepContext& step) const { return step.batch * rows_per_sample_; }

  compute::Backend& backend_;
  int rows_per_sample_;
  int total_;
  std::vector<int> widths_;
};

LayerPlan plan_add(LayerAttributes& attributes, const std::vector<Shape>& inputs) {
  for (std::size_t i = 1; i < inputs.size(); ++i) {
    if (inputs[i] != inputs[0]) {
      attributes.fail(cat("adds inputs of different shapes: ", to_string(inputs[0]), " and ", to_string(inputs[i])));
    }
  }
  LayerPlan plan;
  plan.output = inputs[0];
  plan.forward_flops = static_cast<double>((inputs.size() - 1) * element_count(inputs[0]));
  return plan;
}

LayerPlan plan_concat(LayerAttributes& attributes, const std::vector<Shape>& inputs) {
  Shape output = inputs[0];
  for (std::size_t i = 1; i < inputs.size(); ++i) {
    const Shape& input = inputs[i];
    if (input.size() != output.size() || !std::equal(input.begin(), input.end() - 1, output.begin())) {
      attributes.fail(cat("concatenates shapes that differ before the last axis: ", to_string(inputs[0]), " and ",
                          to_string(input)));
    }
    output.back() += input.back();
  }
  LayerPlan plan;
  plan.output = output;
  return plan;
}

}  // namespace

void register_merge(LayerRegistry& registry) {
  registry.add({.name = "add",
                .summary = "element-wise sum: inputs=A,B[,...] of one shape",
                .min_inputs = 2,
                .max_inputs = 64,
                .gradient_passes_through = true,
                .plan = plan_add,
                .create = [](const LayerBuild& build, LayerAttributes&) { return std::make_unique<AddLayer>(build); }});
  registry.add(
      {.name = "concat",
       .summary = "concatenation along the last axis: inputs=A,B[,...]",
       .min_inputs = 2,
       .max_inputs = 64,
       .plan = plan_concat,
       .create = [](const LayerBuild& build, LayerAttributes&) { return std::make_unique<ConcatLayer>(build); }});
}

}  // namespace pstrain::nn
