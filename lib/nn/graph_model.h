#pragma once
// The model every description builds: the layers of a ModelPlan over a backend, run in the plan's order. It
// owns the flat parameter, gradient and state buffers of model.h's contract, one output and one output-gradient
// buffer per node (max_batch samples each), the input and label buffers, and the loss. Every buffer is
// allocated once: a training step allocates nothing.
//
// Backward walks the nodes in reverse. A node's output gradient is complete once every reader has run: the
// first reader writes it, a later one (residual connections) writes into the node's scratch buffer, which is
// then added to it. Nodes without parameters upstream (a flatten of the data) get no gradient at all. A node
// read only by an add or a reshape has no gradient buffer of its own: its gradient is that reader's, unchanged
// (LayerType::gradient_passes_through), so the reader's backward copies nothing for it.
//
// Batch-norm running statistics live in the state buffer; each trainer moves its own (see the README's
// "Models" section for what the exchange modes do with them).
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "compute/backend.h"
#include "nn/layer.h"
#include "nn/loss.h"
#include "nn/model.h"
#include "nn/model_plan.h"

namespace pstrain::nn {

class GraphModel final : public Model {
 public:
  GraphModel(compute::Backend& backend, ModelPlan plan, std::size_t max_batch, float label_smoothing);

  const ModelPlan& plan() const { return plan_; }

  const std::vector<ParameterInfo>& parameters() const override { return plan_.parameters; }
  std::size_t parameter_count() const override { return plan_.parameter_count; }
  std::size_t input_size() const override { return element_count(plan_.input); }
  std::size_t num_classes() const override { return plan_.classes; }
  // Floats of the output per sample: classes for softmax, 1 for loss=bce.
  std::size_t output_size() const { return element_count(plan_.nodes.back().plan.output); }

  void initialize(std::uint64_t seed) override;
  const std::vector<ParameterInfo>& state_layout() const override { return plan_.state; }
  void get_state(std::span<float> host_out) const override;
  void set_state(std::span<const float> host_in) override;
  void set_step_key(std::uint64_t key) override { step_key_ = key; }
  std::size_t categorical_fields() const override { return plan_.categorical_fields; }
  void set_categorical(const core::JaggedIds* fields) override { categorical_ = fields; }
  void set_cached_lookups(const CachedLookups* lookups) override { cached_lookups_ = lookups; }

  void get_parameters(std::span<float> host_out) const override;
  void set_parameters(std::span<const float> host_in) override;
  void get_gradients(std::span<float> host_out) const override;
  std::span<float> host_parameters() override;
  std::span<const float> host_gradients() const override;
  std::vector<std::string> kernel_descriptions() const override;
  std::string take_step_breakdown() override { return backend_.take_step_breakdown(); }
  float* backend_parameters() override { return parameters_.data(); }
  float* backend_gradients() override { return gradients_.data(); }

  // Streams when its buffers are host memory (a CPU backend), where the exchange sends and receives in place.
  bool can_stream_parameters() const override { return backend_.host_accessible(); }
  void set_parameter_stream(ParameterStream* stream) override;
  bool keep_table_gradients_sparse() override;
  std::vector<TouchedRows> touched_rows() const override;
  BatchResult train_batch(std::span<const float> features, std::span<const std::int32_t> labels,
                          std::size_t count) override;
  BatchResult evaluate_batch(std::span<const float> features, std::span<const std::int32_t> labels,
                             std::size_t count) override;
  // evaluate_batch, and the logits (count x output_size()) copied to `host_logits`: predictions and confusion
  // matrices of a saved model (lib/inference).
  BatchResult evaluate_batch_logits(std::span<const float> features, std::span<const std::int32_t> labels,
                                    std::size_t count, std::span<float> host_logits) override;

 private:
  struct Node {
    std::unique_ptr<Layer> layer;
    compute::Buffer<float> output;       // empty for a reshape, which reads its input's
    const float* output_view = nullptr;  // where the node's output is: its own buffer or its input's
    compute::Buffer<float> gradient;     // dL/d output; empty when the node needs none or reads its reader's
    float* gradient_view = nullptr;      // where dL/d output is: `gradient`, or its pass-through reader's
    bool gradient_from_reader = false;   // gradient_view is the (only) reader's: nothing to write into it
    compute::Buffer<float> scratch;      // a second reader's contribution; only for nodes read more than once
  };

  void build_nodes();
  void share_pass_through_gradients(const std::vector<int>& readers);
  int load_batch(std::span<const float> features, std::span<const std::int32_t> labels, std::size_t count);
  const float* forward(const StepContext& step);
  void backward(const StepContext& step);
  const float* node_output(int index) const;
  void check_flat_size(std::size_t size, std::size_t expected, const char* caller) const;
  // The graph's share of streaming (parameter_stream.h): a node's parameters, whole, unless its layer streams.
  void stream_before_forward(std::size_t node) const;
  void stream_after_backward(std::size_t node) const;

  compute::Backend& backend_;
  ModelPlan plan_;
  std::size_t max_batch_;
  std::unique_ptr<Loss> loss_;
  std::uint64_t step_key_ = 0;
  const core::JaggedIds* categorical_ = nullptr;
  const CachedLookups* cached_lookups_ = nullptr;
  ParameterStream* stream_ = nullptr;
  compute::Buffer<float> parameters_;
  compute::Buffer<float> gradients_;
  compute::Buffer<float> state_;
  compute::Buffer<float> input_;
  compute::Buffer<std::int32_t> labels_;
  std::vector<Node> nodes_;
  // Reused per call, sized once: the pointers handed to a layer.
  std::vector<const float*> input_pointers_;
  std::vector<float*> gradient_pointers_;
  std::vector<bool> gradient_written_;
  std::vector<std::size_t> sparse_table_nodes_;  // the nodes whose row tables keep their gradients sparse
};

// Builds a GraphModel for `plan`; Error(kUsage) for a max_batch of 0 or one whose buffers the backend's int sizes
// cannot address.
std::unique_ptr<GraphModel> make_graph_model(compute::Backend& backend, ModelPlan plan, std::size_t max_batch,
                                             float label_smoothing = 0.0f);

}  // namespace pstrain::nn
