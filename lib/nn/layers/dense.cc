// dense: y = x W^T + b on a flat input, W stored {units, inputs} as in PyTorch.
//   units=N (required)  bias=true|false (true)  init=kaiming|glorot (kaiming): U(-a, a) weights, a from
//   (fan_in, fan_out) = (inputs, units) as initialization.h says; the bias starts at 0.
#include <algorithm>
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
    // The whole weight at once: computing y in blocks of columns as the blocks arrive changes the bits where the
    // BLAS picks another kernel for a narrow product (a CNN's fc1, 3136 inputs), and measured no faster.
    if (step.stream != nullptr) {
      step.stream->before_forward(weight_.offset, weight_size());
      if (bias_.value != nullptr) step.stream->before_forward(bias_.offset, static_cast<std::size_t>(units_));
    }
    // beta = 0 writes the product straight into y: no zeroing pass, no temporary.
    backend_.gemm(false, true, step.batch, units_, inputs_, 1.0f, inputs[0], weight_.value, 0.0f, output);
    if (bias_.value != nullptr) backend_.add_row_bias(output, bias_.value, step.batch, units_);
  }

  // The bias gradient and dx (which reads all of W) first, then dW. On host memory dW is always computed in the
  // blocks of rows a stream sends (for_each_row_block), streamed or not: a row block of a product is not the bits
  // of the same rows of the whole product under every BLAS kernel (OpenBLAS's Haswell kernels, which Zen 1-3 and
  // OPENBLAS_CORETYPE=Haswell get, split a long sum otherwise), and a streamed sync step must give an unstreamed
  // one's bits whatever kernels the machine has. On a GPU, which never streams, the whole product.
  void backward(const StepContext& step, std::span<const float* const> inputs, const float* /*output*/, const float* dy,
                std::span<float* const> input_gradients) override {
    if (bias_.value != nullptr) {
      backend_.sum_rows(dy, bias_.gradient, step.batch, units_, 0.0f);
      if (step.stream != nullptr) step.stream->after_backward(bias_.offset, static_cast<std::size_t>(units_));
    }
    if (input_gradients[0] != nullptr) {
      backend_.gemm(false, false, step.batch, inputs_, units_, 1.0f, dy, weight_.value, 0.0f, input_gradients[0]);
    }
    if (!backend_.host_accessible()) {
      backend_.gemm(true, false, units_, inputs_, step.batch, 1.0f, dy, inputs[0], 0.0f, weight_.gradient);
      return;
    }
    weight_gradient_by_row_blocks(step, inputs[0], dy);
  }

  bool streams_parameters() const override { return true; }

 private:
  std::size_t weight_size() const { return static_cast<std::size_t>(units_) * static_cast<std::size_t>(inputs_); }

  // Visits W's rows in blocks of about kStreamBlockFloats floats: visit(first, rows).
  template <typename Visit>
  void for_each_row_block(Visit&& visit) const {
    const std::size_t blocks = (weight_size() + kStreamBlockFloats - 1) / kStreamBlockFloats;
    const int rows_per_block = static_cast<int>((static_cast<std::size_t>(units_) + blocks - 1) / blocks);
    for (int first = 0; first < units_; first += rows_per_block) visit(first, std::min(rows_per_block, units_ - first));
  }

  // dW block by block, each block going out (with a stream) while the next is computed; the same calls with or
  // without a stream, so the same bits (tests/unit/nn/test_parameter_stream.cc, under every kernel family).
  void weight_gradient_by_row_blocks(const StepContext& step, const float* x, const float* dy) {
    for_each_row_block([&](int first, int rows) {
      const std::size_t at = static_cast<std::size_t>(first) * static_cast<std::size_t>(inputs_);
      // dW[first : first + rows, :] = dy[:, first : first + rows]^T x
      backend_.gemm_strided(true, false, rows, inputs_, step.batch, 1.0f, dy + first, units_, x, inputs_, 0.0f,
                            weight_.gradient + at, inputs_);
      if (step.stream != nullptr)
        step.stream->after_backward(weight_.offset + at, static_cast<std::size_t>(rows) * inputs_);
    });
  }

  // About 128 KiB of weight gradient per block: small enough that the last block's transfer is short, large
  // enough that the block's product runs near the kernel's full rate.
  static constexpr std::size_t kStreamBlockFloats = 32768;

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
