// conv2d: a 2-D convolution over NHWC images, on the backend's own kernel where it has one for the shape
// (Backend::make_convolution: oneDNN's on the CPU), else as im2col + ONE matrix product over the whole batch (the
// im2col rows are output pixels, so the product is already NHWC and the bias is a row bias). The weight is stored
// {filters, kernel, kernel, channels}: a filters x (k*k*C) matrix whose columns are in im2col's (ky, kx, c) order
// (NOT PyTorch's {out, in, kh, kw}).
//   filters=N (required)  kernel=K (3)  stride=S (1)  padding=P ((K-1)/2, 'same' for odd K at stride 1)
//   bias=true|false (true)  init=kaiming|glorot (kaiming; fan_in k*k*C, fan_out k*k*filters as in PyTorch)
#include "nn/initialization.h"
#include "nn/layer_registry.h"

namespace pstrain::nn {

namespace {

compute::ConvGeometry geometry_of(const Shape& input, LayerAttributes& attributes) {
  compute::ConvGeometry g;
  g.height = static_cast<int>(input[0]);
  g.width = static_cast<int>(input[1]);
  g.channels = static_cast<int>(input[2]);
  g.kernel = static_cast<int>(attributes.positive("kernel", 3));
  g.stride = static_cast<int>(attributes.positive("stride", 1));
  g.padding = static_cast<int>(attributes.non_negative("padding", static_cast<std::size_t>((g.kernel - 1) / 2)));
  return g;
}

class Conv2dLayer final : public Layer {
 public:
  Conv2dLayer(const LayerBuild& build, LayerAttributes& attributes)
      : backend_(build.backend),
        geometry_(geometry_of(build.inputs[0], attributes)),
        filters_(static_cast<int>(build.plan.output[2])),
        weight_(build.parameters[0]),
        bias_(build.parameters.size() > 1 ? build.parameters[1] : ParameterView{}),
        kernel_(build.backend.make_convolution(geometry_, filters_, static_cast<int>(build.max_batch))),
        columns_(build.backend,
                 kernel_ ? 0 : build.max_batch * pixels() * static_cast<std::size_t>(geometry_.column_width())) {}

  std::string kernel_description() const override { return kernel_ ? kernel_->description() : "im2col + gemm"; }

  void forward(const StepContext& step, std::span<const float* const> inputs, float* output) override {
    if (kernel_) return kernel_->forward(inputs[0], weight_.value, bias_.value, output, step.batch);
    const int rows = step.batch * static_cast<int>(pixels());
    backend_.im2col(inputs[0], columns_.data(), geometry_, step.batch);
    backend_.gemm(false, true, rows, filters_, geometry_.column_width(), 1.0f, columns_.data(), weight_.value, 0.0f,
                  output);
    if (bias_.value != nullptr) backend_.add_row_bias(output, bias_.value, rows, filters_);
  }

  void backward(const StepContext& step, std::span<const float* const> inputs, const float* /*output*/, const float* dy,
                std::span<float* const> input_gradients) override {
    if (kernel_) {
      return kernel_->backward(inputs[0], dy, weight_.value, weight_.gradient, bias_.gradient, input_gradients[0],
                               step.batch);
    }
    const int rows = step.batch * static_cast<int>(pixels());
    const int width = geometry_.column_width();
    backend_.gemm(true, false, filters_, width, rows, 1.0f, dy, columns_.data(), 0.0f, weight_.gradient);
    if (bias_.value != nullptr) backend_.sum_rows(dy, bias_.gradient, rows, filters_, 0.0f);
    if (input_gradients[0] == nullptr) return;
    // dL/dcolumns = dy W overwrites the columns (no longer needed), and col2im sums them back onto the pixels.
    backend_.gemm(false, false, rows, width, filters_, 1.0f, dy, weight_.value, 0.0f, columns_.data());
    backend_.col2im(columns_.data(), input_gradients[0], geometry_, step.batch);
  }

 private:
  std::size_t pixels() const {
    return static_cast<std::size_t>(geometry_.out_height()) * static_cast<std::size_t>(geometry_.out_width());
  }

  compute::Backend& backend_;
  compute::ConvGeometry geometry_;
  int filters_;
  ParameterView weight_;
  ParameterView bias_;
  std::unique_ptr<compute::ConvolutionKernel> kernel_;  // the backend's own convolution, or null: im2col + gemm
  compute::Buffer<float> columns_;  // im2col of the input; dL/d columns during backward (im2col + gemm only)
};

LayerPlan plan_conv2d(LayerAttributes& attributes, const std::vector<Shape>& inputs) {
  if (!is_image(inputs[0]))
    attributes.fail(cat("needs an image input (height x width x channels), got ", to_string(inputs[0])));
  const compute::ConvGeometry g = geometry_of(inputs[0], attributes);
  const std::size_t filters = attributes.positive("filters");
  const bool bias = attributes.flag("bias", true);
  const std::string init = attributes.choice("init", "kaiming", {"kaiming", "glorot"});
  if (g.padding >= g.kernel) attributes.fail(cat("padding=", g.padding, " must be smaller than kernel=", g.kernel));
  if (g.height + 2 * g.padding < g.kernel || g.width + 2 * g.padding < g.kernel) {
    attributes.fail(cat("a ", g.kernel, "x", g.kernel, " kernel does not fit the ", to_string(inputs[0]),
                        " input with padding ", g.padding));
  }
  const auto area = static_cast<std::size_t>(g.kernel * g.kernel);
  const auto channels = static_cast<std::size_t>(g.channels);
  LayerPlan plan;
  plan.output = {static_cast<std::size_t>(g.out_height()), static_cast<std::size_t>(g.out_width()), filters};
  plan.parameters.push_back(
      {"weight",
       {filters, static_cast<std::size_t>(g.kernel), static_cast<std::size_t>(g.kernel), channels},
       {InitRule::Kind::kUniform, named_init_limit(init, area * channels, area * filters)}});
  if (bias) plan.parameters.push_back({"bias", {filters}, {}});
  plan.forward_flops = 2.0 * static_cast<double>(area * channels * filters) * g.out_height() * g.out_width();
  return plan;
}

}  // namespace

void register_conv2d(LayerRegistry& registry) {
  registry.add({.name = "conv2d",
                .summary = "2-D convolution (NHWC): filters=N [kernel=3] [stride=1] [padding=(k-1)/2] [bias=true] "
                           "[init=kaiming|glorot]",
                .plan = plan_conv2d,
                .create = [](const LayerBuild& build, LayerAttributes& attributes) {
                  return std::make_unique<Conv2dLayer>(build, attributes);
                }});
}

}  // namespace pstrain::nn
