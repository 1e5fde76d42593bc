// dense: y = x W^T + b on a flat input, W stored {units, inputs} as in PyTorch.
//   units=N (required)  bias=true|false (true)  init=kaiming|glorot (kaiming): U(-a, a) weights, a from
//   (fan_in, fan_out) = (inputs, units) as initialization.h says; the bias starts at 0.
#include <limits>

#include "nn/initialization.h"
#include "nn/layer_registry.h"

namespace pstrain::nn {

namespace {

class DenseLayer final : public Layer {
 public:
  explicit DenseLayer(const LayerBuild& build)
      : backend_(build.backend),
        inputs_(static_cast<int>(build.inputs[0][0])),
        units_(static_cast<int>(build.plan.output[0])),
        weight_(build.parameters[0]),
        bias_(build.parameters.size() > 1 ? build.parameters[1] : ParameterView{}) {}

  void forward(const StepContext& step, std::span<const float* const> inputs, float* output) override {
    // beta = 0 writes the product straight into y: no zeroing pass, no temporary.
    backend_.gemm(false, true, step.batch, units_, inputs_, 1.0f, inputs[0], weight_.value, 0.0f, output);
    if (bias_.value != nullptr) backend_.add_row_bias(output, bias_.value, step.batch, units_);
  }

  void backward(const StepContext& step, std::span<const float* const> inputs, const float* /*output*/, const float* dy,
                std::span<float* const> input_gradients) override {
    backend_.gemm(true, false, units_, inputs_, step.batch, 1.0f, dy, inputs[0], 0.0f, weight_.gradient);
    if (bias_.value != nullptr) backend_.sum_rows(dy, bias_.gradient, step.batch, units_, 0.0f);
    if (input_gradients[0] != nullptr) {
      backend_.gemm(false, false, step.batch, inputs_, units_, 1.0f, dy, weight_.value, 0.0f, input_gradients[0]);
    }
  }

 private:
  compute::Backend& backend_;
  int inputs_;
  int units_;
  ParameterView weight_;
  ParameterView bias_;
};

LayerPlan plan_dense(LayerAttributes& attributes, const std::vector<Shape>& inputs) {
  if (inputs[0].size() != 1) {
    attributes.fail(cat("needs a flat input, got ", to_string(inputs[0]), " (put a flatten layer before it)"));
  }
  const std::size_t in = inputs[0][0];
  const std::size_t units = attributes.positive("units");
  const bool bias = attributes.flag("bias", true);
  const std::string init = attributes.choice("init", "kaiming", {"kaiming", "glorot"});
  LayerPlan plan;
  plan.output = {units};
  plan.parameters.push_back({"weight", {units, in}, {InitRule::Kind::kUniform, named_init_limit(init, in, units)}});
  if (bias) plan.parameters.push_back({"bias", {units}, {}});
  plan.forward_flops = 2.0 * static_cast<double>(in) * static_cast<double>(units);
  return plan;
}

}  // namespace

void register_dense(LayerRegistry& registry) {
  registry.add(
      {.name = "dense",
       .summary = "fully connected: units=N [bias=true] [init=kaiming|glorot]",
       .plan = plan_dense,
       .create = [](const LayerBuild& build, LayerAttributes&) { return std::make_unique<DenseLayer>(build); }});
}

}  // namespace pstrain::nn
