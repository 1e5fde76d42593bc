// embedding vocab=V dim=D [limit=1/sqrt(D)]: looks up one row of a V x D table per id. The input holds
// integer ids as floats (exact below 2^24), shape {tokens}; the output is {tokens, D}. The table, named
// `weight` as in PyTorch, starts U(-limit, limit). Its gradient is dense here (every row, most of them 0); the
// table is a row table (layer.h), which the parameter servers hold and update row by row (ps/table_plan.h).
#include <cmath>

#include "nn/layer_registry.h"

namespace pstrain::nn {

namespace {

class EmbeddingLayer final : public Layer {
 public:
  explicit EmbeddingLayer(const LayerBuild& build)
      : backend_(build.backend),
        tokens_(static_cast<int>(build.inputs[0][0])),
        vocab_(static_cast<int>(build.plan.parameters[0].shape[0])),
        dim_(static_cast<int>(build.plan.parameters[0].shape[1])),
        table_(build.parameters[0]) {}

  void forward(const StepContext& step, std::span<const float* const> inputs, float* output) override {
    backend_.gather_rows(table_.value, inputs[0], output, step.batch * tokens_, dim_, vocab_);
  }
  void backward(const StepContext& step, std::span<const float* const> inputs, const float*, const float* dy,
                std::span<float* const> input_gradients) override {
    backend_.scatter_add_rows(dy, inputs[0], table_.gradient, step.batch * tokens_, dim_, vocab_);
    // Ids are not differentiable.
    if (input_gradients[0] != nullptr) {
      backend_.fill(input_gradients[0], static_cast<std::size_t>(step.batch) * tokens_, 0.0f);
    }
  }

 private:
  compute::Backend& backend_;
  int tokens_;
  int vocab_;
  int dim_;
  ParameterView table_;
};

LayerPlan plan_embedding(LayerAttributes& attributes, const std::vector<Shape>& inputs) {
  if (inputs[0].size() != 1) attributes.fail(cat("needs a flat input of ids, got ", to_string(inputs[0])));
  const std::size_t vocab = attributes.positive("vocab");
  const std::size_t dim = attributes.positive("dim");
  const float limit =
      attributes.number("limit", static_cast<float>(1.0 / std::sqrt(static_cast<double>(dim))), 0.0f, 1e30f);
  LayerPlan plan;
  plan.output = {inputs[0][0], dim};
  plan.parameters.push_back({"weight", {vocab, dim}, {InitRule::Kind::kCounterUniform, limit}, /*row_table=*/true});
  return plan;
}

}  // namespace

void register_embedding(LayerRegistry& registry) {
  registry.add(
      {.name = "embedding",
       .summary = "rows of a table for integer ids: vocab=V dim=D [limit=1/sqrt(D)]",
       .plan = plan_embedding,
       .create = [](const LayerBuild& build, LayerAttributes&) { return std::make_unique<EmbeddingLayer>(build); }});
}

}  // namespace pstrain::nn
