// dot_interaction inputs=BOTTOM,A,B,...: DLRM's feature interaction. BOTTOM is the bottom MLP's output {d}; the
// others are field vectors {d} or stacks of them {k, d} (embedding_bag). With n vectors in all (BOTTOM
// included), the output is BOTTOM followed by the n(n-1)/2 dot products of distinct pairs, {d + n(n-1)/2}: for
// i < j in input order, row by row of the Gram matrix's strict upper triangle (DLRM's interaction "dot" without
// self-interaction).
//
// Per sample, the Gram matrix Z Z^T of its n x d vectors is one GEMM; backward is dZ = (dG + dG^T) Z with dG the
// output gradient placed in the upper triangle, two GEMMs. Everything runs through the backend.
#include "nn/layer_registry.h"
#include "nn/layers/vector_stack.h"

namespace pstrain::nn {

namespace {

class DotInteractionLayer final : public Layer {
 public:
  DotInteractionLayer(const LayerBuild& build, StackShape shape)
      : backend_(build.backend),
        stack_(build.backend, build.inputs, shape, build.max_batch),
        n_(stack_.vectors()),
        d_(stack_.dim()),
        width_(static_cast<int>(build.plan.output[0])),
        gram_(build.backend, build.max_batch * shape.vectors * shape.vectors),
        bottom_gradient_(build.backend, build.max_batch * shape.dim) {}

  void forward(const StepContext& step, std::span<const float* const> inputs, float* output) override {
    const int batch = step.batch;
    stack_.gather(inputs, batch);
    const int stride = batch * d_;  // between one sample's vectors in the stack
    for (int s = 0; s < batch; ++s) {
      const float* z = stack_.vector(0, batch) + s * d_;
      backend_.gemm_strided(false, true, n_, n_, d_, 1.0f, z, stride, z, stride, 0.0f, gram(s), n_);
    }
    backend_.copy_columns(inputs[0], d_, output, width_, batch, d_);
    int column = d_;
    for (int i = 0; i + 1 < n_; ++i) {
      // Row i's part of the triangle, columns i+1 .. n-1, is contiguous in each sample's Gram matrix.
      backend_.copy_columns(gram(0) + i * n_ + i + 1, n_ * n_, output + column, width_, batch, n_ - 1 - i);
      column += n_ - 1 - i;
    }
  }

  void backward(const StepContext& step, std::span<const float* const>, const float*, const float* dy,
                std::span<float* const> input_gradients) override {
    const int batch = step.batch;
    backend_.fill(gram(0), static_cast<std::size_t>(batch) * n_ * n_, 0.0f);
    int column = d_;
    for (int i = 0; i + 1 < n_; ++i) {
      backend_.copy_columns(dy + column, width_, gram(0) + i * n_ + i + 1, n_ * n_, batch, n_ - 1 - i);
      column += n_ - 1 - i;
    }
    const int stride = batch * d_;
    for (int s = 0; s < batch; ++s) {
      const float* z = stack_.vector(0, batch) + s * d_;
      float* dz = stack_.gradient(0, batch) + s * d_;
      backend_.gemm_strided(false, false, n_, d_, n_, 1.0f, gram(s), n_, z, stride, 0.0f, dz, stride);
      backend_.gemm_strided(true, false, n_, d_, n_, 1.0f, gram(s), n_, z, stride, 1.0f, dz, stride);
    }
    stack_.scatter_gradient(input_gradients, batch);
    // BOTTOM also reaches the output unchanged: its first d columns.
    if (input_gradients[0] != nullptr) {
      backend_.copy_columns(dy, width_, bottom_gradient_.data(), d_, batch, d_);
      backend_.axpy(1.0f, bottom_gradient_.data(), input_gradients[0], static_cast<std::size_t>(batch) * d_);
    }
  }

 private:
  float* gram(int sample) const { return gram_.data() + static_cast<std::size_t>(sample) * n_ * n_; }

  compute::Backend& backend_;
  VectorStack stack_;
  int n_;
  int d_;
  int width_;
  compute::Buffer<float> gram_;  // batch x n x n: forward's Gram matrices, backward's dG
  compute::Buffer<float> bottom_gradient_;
};

LayerPlan plan_dot_interaction(LayerAttributes& attributes, const std::vector<Shape>& inputs) {
  if (inputs[0].size() != 1) {
    attributes.fail(cat("its first input is the bottom MLP's output, a vector {d}; got ", to_string(inputs[0])));
  }
  const StackShape shape = stack_shape(attributes, inputs);
  const std::size_t pairs = shape.vectors * (shape.vectors - 1) / 2;
  LayerPlan plan;
  plan.output = {shape.dim + pairs};
  plan.forward_flops = 2.0 * static_cast<double>(shape.vectors * shape.vectors * shape.dim);
  return plan;
}

}  // namespace

void register_dot_interaction(LayerRegistry& registry) {
  registry.add({.name = "dot_interaction",
                .summary = "DLRM's interaction: inputs=BOTTOM,A,... -> BOTTOM and the dot products of all pairs",
                .min_inputs = 2,
                .max_inputs = 64,
                .plan = plan_dot_interaction,
                .create = [](const LayerBuild& build, LayerAttributes& attributes) {
                  return std::make_unique<DotInteractionLayer>(build, stack_shape(attributes, build.inputs));
                }});
}

}  // namespace pstrain::nn
