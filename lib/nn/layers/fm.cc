// fm inputs=A,B,...: the second-order term of a factorization machine (DeepFM's FM part) over field vectors {d}
// or stacks of them {k, d} (embedding_bag), n vectors v_1..v_n in all: the sum of the dot products of distinct
// pairs, sum_{i<j} <v_i, v_j> = 0.5 sum_k ((sum_i v_ik)^2 - sum_i v_ik^2), which costs O(n d) instead of
// O(n^2 d). Output {1}. Backward: d/dv_ik = dy (S_k - v_ik) with S = sum_i v_i.
//
// The vectors are stacked vector-major (vector_stack.h), so the sums over vectors are axpys of batch x d blocks
// and the sum over k one GEMM with a vector of ones; everything runs through the backend.
#include <vector>

#include "nn/layer_registry.h"
#include "nn/layers/vector_stack.h"

namespace pstrain::nn {

namespace {

class FmLayer final : public Layer {
 public:
  FmLayer(const LayerBuild& build, StackShape shape)
      : backend_(build.backend),
        stack_(build.backend, build.inputs, shape, build.max_batch),
        n_(stack_.vectors()),
        d_(stack_.dim()),
        sum_(build.backend, build.max_batch * shape.dim),
        squares_(build.backend, build.max_batch * shape.dim),
        scratch_(build.backend, build.max_batch * shape.dim),
        ones_(build.backend, shape.dim) {
    const std::vector<float> ones(shape.dim, 1.0f);
    backend_.copy_from_host(ones_.data(), ones.data(), ones.size() * sizeof(float));
  }

  // sum_ keeps S for backward.
  void forward(const StepContext& step, std::span<const float* const> inputs, float* output) override {
    const int batch = step.batch;
    const std::size_t block = static_cast<std::size_t>(batch) * d_;
    stack_.gather(inputs, batch);
    backend_.copy(sum_.data(), stack_.vector(0, batch), block * sizeof(float));
    backend_.multiply(stack_.vector(0, batch), stack_.vector(0, batch), squares_.data(), block);
    for (int v = 1; v < n_; ++v) {
      backend_.axpy(1.0f, stack_.vector(v, batch), sum_.data(), block);
      backend_.multiply(stack_.vector(v, batch), stack_.vector(v, batch), scratch_.data(), block);
      backend_.axpy(1.0f, scratch_.data(), squares_.data(), block);
    }
    // scratch = S^2 - sum_i v_i^2, then output = 0.5 * scratch . ones
    backend_.multiply(sum_.data(), sum_.data(), scratch_.data(), block);
    backend_.axpy(-1.0f, squares_.data(), scratch_.data(), block);
    backend_.gemm(false, false, batch, 1, d_, 0.5f, scratch_.data(), ones_.data(), 0.0f, output);
  }

  void backward(const StepContext& step, std::span<const float* const>, const float*, const float* dy,
                std::span<float* const> input_gradients) override {
    const int batch = step.batch;
    const std::size_t block = static_cast<std::size_t>(batch) * d_;
    // scratch = dy broadcast over the d columns: the batch x 1 by 1 x d product with ones.
    backend_.gemm(false, false, batch, d_, 1, 1.0f, dy, ones_.data(), 0.0f, scratch_.data());
    for (int v = 0; v < n_; ++v) {
      float* gradient = stack_.gradient(v, batch);
      backend_.copy(gradient, sum_.data(), block * sizeof(float));
      backend_.axpy(-1.0f, stack_.vector(v, batch), gradient, block);
      backend_.multiply(gradient, scratch_.data(), gradient, block);
    }
    stack_.scatter_gradient(input_gradients, batch);
  }

 private:
  compute::Backend& backend_;
  VectorStack stack_;
  int n_;
  int d_;
  compute::Buffer<float> sum_;      // batch x d: S
  compute::Buffer<float> squares_;  // batch x d: sum_i v_i^2
  compute::Buffer<float> scratch_;  // batch x d
  compute::Buffer<float> ones_;     // d
};

LayerPlan plan_fm(LayerAttributes& attributes, const std::vector<Shape>& inputs) {
  const StackShape shape = stack_shape(attributes, inputs);
  if (shape.vectors < 2) attributes.fail(cat("needs at least 2 vectors to pair, got ", to_string(inputs[0])));
  LayerPlan plan;
  plan.output = {1};
  plan.forward_flops = 4.0 * static_cast<double>(shape.vectors * shape.dim);
  return plan;
}

}  // namespace

void register_fm(LayerRegistry& registry) {
  registry.add({.name = "fm",
                .summary = "factorization machine's second-order term: inputs=A,B,... vectors {d} or {k, d} -> {1}",
                .min_inputs = 1,
                .max_inputs = 64,
                .plan = plan_fm,
                .create = [](const LayerBuild& build, LayerAttributes& attributes) {
                  return std::make_unique<FmLayer>(build, stack_shape(attributes, build.inputs));
                }});
}

}  // namespace pstrain::nn
