#include "nn/graph_model.h"

#include <limits>

#include "core/error.h"

namespace pstrain::nn {

GraphModel::GraphModel(compute::Backend& backend, ModelPlan plan, std::size_t max_batch, float label_smoothing)
    : backend_(backend),
      plan_(std::move(plan)),
      max_batch_(max_batch),
      loss_(make_loss(plan_.loss, plan_.classes, label_smoothing)) {
  parameters_ = compute::Buffer<float>(backend_, plan_.parameter_count);
  gradients_ = compute::Buffer<float>(backend_, plan_.parameter_count);
  state_ = compute::Buffer<float>(backend_, plan_.state_count);
  backend_.fill(parameters_.data(), plan_.parameter_count, 0.0f);
  backend_.fill(gradients_.data(), plan_.parameter_count, 0.0f);
  backend_.fill(state_.data(), plan_.state_count, 0.0f);
  input_ = compute::Buffer<float>(backend_, max_batch_ * input_size());
  labels_ = compute::Buffer<std::int32_t>(backend_, max_batch_);
  build_nodes();
}

void GraphModel::build_nodes() {
  // readers[j]: how many inputs read node j; last_reader[j]: the last node among them.
  std::vector<int> readers(plan_.nodes.size(), 0);
  std::vector<int> last_reader(plan_.nodes.size(), -1);
  for (std::size_t i = 0; i < plan_.nodes.size(); ++i) {
    for (const int input : plan_.nodes[i].inputs) {
      if (input == ModelPlan::kDataInput) continue;
      ++readers[static_cast<std::size_t>(input)];
      last_reader[static_cast<std::size_t>(input)] = static_cast<int>(i);
    }
  }
  for (std::size_t i = 0; i < plan_.nodes.size(); ++i) {
    const PlannedNode& planned = plan_.nodes[i];
    LayerBuild build{.backend = backend_,
                     .inputs = planned.input_shapes,
                     .plan = planned.plan,
                     .parameters = {},
                     .state = {},
                     .max_batch = max_batch_,
                     .index = i};
    for (const std::size_t index : planned.parameters) {
      const std::size_t offset = plan_.parameters[index].offset;
      build.parameters.push_back({parameters_.data() + offset, gradients_.data() + offset, offset});
    }
    for (const std::size_t index : planned.state) build.state.push_back(state_.data() + plan_.state[index].offset);
    LayerAttributes attributes(planned.spec.attributes, plan_.spec.where(planned.spec));
    Node node;
    node.layer = planned.type->create(build, attributes);
    const std::size_t size = max_batch_ * element_count(planned.plan.output);
    if (planned.type->reshapes_only) {
      node.output_view = node_output(planned.inputs[0]);
    } else {
      node.output = compute::Buffer<float>(backend_, size);
      node.output_view = node.output.data();
    }
    if (planned.needs_gradient) {
      const int reader = readers[i] == 1 ? last_reader[i] : -1;
      node.gradient_from_reader =
          reader >= 0 && plan_.nodes[static_cast<std::size_t>(reader)].type->gradient_passes_through;
      if (!node.gradient_from_reader) node.gradient = compute::Buffer<float>(backend_, size);
      if (readers[i] > 1) node.scratch = compute::Buffer<float>(backend_, size);
    }
    node.gradient_view = node.gradient.data();
    nodes_.push_back(std::move(node));
    input_pointers_.resize(std::max(input_pointers_.size(), planned.inputs.size()));
    gradient_pointers_.resize(std::max(gradient_pointers_.size(), planned.inputs.size()));
  }
  share_pass_through_gradients(last_reader);
  gradient_written_.assign(nodes_.size(), false);
}

// From the last node back, so that a chain of pass-through readers (add of an add) resolves to the buffer at
// its end. A node that needs a gradient makes its reader need one too, so that buffer exists.
void GraphModel::share_pass_through_gradients(const std::vector<int>& last_reader) {
  for (std::size_t i = nodes_.size(); i-- > 0;) {
    if (!nodes_[i].gradient_from_reader) continue;
    const Node& reader = nodes_[static_cast<std::size_t>(last_reader[i])];
    PSTRAIN_ASSERT(reader.gradient_view != nullptr, "node ", plan_.nodes[i].spec.name,
                   " passes its gradient to a reader that has none");
    nodes_[i].gradient_view = reader.gradient_view;
  }
}

void GraphModel::initialize(std::uint64_t seed) {
  // Pinned by the models' recipe tests: checkpoints and multi-rank runs rely on it.
  set_parameters(initial_parameters(plan_, seed));
  set_state(initial_state(plan_));
}

void GraphModel::get_state(std::span<float> host_out) const {
  check_flat_size(host_out.size(), plan_.state_count, "get_state");
  backend_.copy_to_host(host_out.data(), state_.data(), host_out.size_bytes());
}

void GraphModel::set_state(std::span<const float> host_in) {
  check_flat_size(host_in.size(), plan_.state_count, "set_state");
  backend_.copy_from_host(state_.data(), host_in.data(), host_in.size_bytes());
}

void GraphModel::get_parameters(std::span<float> host_out) const {
  check_flat_size(host_out.size(), plan_.parameter_count, "get_parameters");
  backend_.copy_to_host(host_out.data(), parameters_.data(), host_out.size_bytes());
}

void GraphModel::set_parameters(std::span<const float> host_in) {
  check_flat_size(host_in.size(), plan_.parameter_count, "set_parameters");
  backend_.copy_from_host(parameters_.data(), host_in.data(), host_in.size_bytes());
}

void GraphModel::get_gradients(std::span<float> host_out) const {
  check_flat_size(host_out.size(), plan_.parameter_count, "get_gradients");
  backend_.copy_to_host(host_out.data(), gradients_.data(), host_out.size_bytes());
}

std::span<float> GraphModel::host_parameters() {
  if (!backend_.host_accessible()) return {};
  return {parameters_.data(), plan_.parameter_count};
}

std::span<const float> GraphModel::host_gradients() const {
  if (!backend_.host_accessible()) return {};
  return {gradients_.data(), plan_.parameter_count};
}

BatchResult GraphModel::train_batch(std::span<const float> features, std::span<const std::int32_t> labels,
                                    std::size_t count) {
  PSTRAIN_ASSERT(count > 0, "train_batch needs at least one sample");
  using Point = compute::Backend::StepPoint;
  backend_.mark_step(Point::kStart);
  const StepContext step{.batch = load_batch(features, labels, count),
                         .training = true,
                         .random_key = step_key_,
                         .stream = stream_,
                         .categorical = categorical_,
                         .cached_lookups = cached_lookups_};
  backend_.mark_step(Point::kBatchLoaded);
  const float* logits = forward(step);
  // The loss writes d(mean loss)/d(logits) straight into the output node's gradient, where backward starts.
  const BatchResult result = (*loss_)(backend_, logits, labels_.data(), nodes_.back().gradient_view, step.batch);
  backend_.mark_step(Point::kForwardDone);
  backward(step);
  backend_.mark_step(Point::kBackwardDone);
  return result;
}

BatchResult GraphModel::evaluate_batch(std::span<const float> features, std::span<const std::int32_t> labels,
                                       std::size_t count) {
  if (count == 0) return {};
  const StepContext step{.batch = load_batch(features, labels, count),
                         .training = false,
                         .random_key = 0,
                         .categorical = categorical_,
                         .cached_lookups = cached_lookups_};
  return (*loss_)(backend_, forward(step), labels_.data(), nullptr, step.batch);
}

BatchResult GraphModel::evaluate_batch_logits(std::span<const float> features, std::span<const std::int32_t> labels,
                                              std::size_t count, std::span<float> host_logits) {
  if (count == 0) return {};
  PSTRAIN_ASSERT(host_logits.size() == count * output_size(), "logits hold ", host_logits.size(), " floats, expected ",
                 count, " x ", output_size());
  const StepContext step{.batch = load_batch(features, labels, count),
                         .training = false,
                         .random_key = 0,
                         .categorical = categorical_,
                         .cached_lookups = cached_lookups_};
  const float* logits = forward(step);
  const BatchResult result = (*loss_)(backend_, logits, labels_.data(), nullptr, step.batch);
  backend_.copy_to_host(host_logits.data(), logits, host_logits.size_bytes());
  return result;
}

const float* GraphModel::node_output(int index) const {
  return index == ModelPlan::kDataInput ? input_.data() : nodes_[static_cast<std::size_t>(index)].output_view;
}

const float* GraphModel::forward(const StepContext& step) {
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const std::vector<int>& inputs = plan_.nodes[i].inputs;
    for (std::size_t k = 0; k < inputs.size(); ++k) input_pointers_[k] = node_output(inputs[k]);
    if (plan_.nodes[i].type->reshapes_only) continue;
    if (step.stream != nullptr) stream_before_forward(i);
    nodes_[i].layer->forward(step, std::span(input_pointers_.data(), inputs.size()), nodes_[i].output.data());
  }
  return nodes_.back().output_view;
}

void GraphModel::backward(const StepContext& step) {
  std::fill(gradient_written_.begin(), gradient_written_.end(), false);
  gradient_written_.back() = true;  // by the loss
  for (std::size_t i = nodes_.size(); i-- > 0;) {
    if (!plan_.nodes[i].needs_gradient) continue;
    PSTRAIN_ASSERT(gradient_written_[i], "node ", plan_.nodes[i].spec.name, " reached backward without a gradient");
    const std::vector<int>& inputs = plan_.nodes[i].inputs;
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      const int input = inputs[k];
      input_pointers_[k] = node_output(input);
      gradient_pointers_[k] = nullptr;
      if (input == ModelPlan::kDataInput || !plan_.nodes[static_cast<std::size_t>(input)].needs_gradient) continue;
      Node& source = nodes_[static_cast<std::size_t>(input)];
      if (source.gradient_from_reader) {
        gradient_written_[static_cast<std::size_t>(input)] = true;  // it reads this node's gradient as it is
        continue;
      }
      gradient_pointers_[k] =
          gradient_written_[static_cast<std::size_t>(input)] ? source.scratch.data() : source.gradient.data();
    }
    nodes_[i].layer->backward(step, std::span(input_pointers_.data(), inputs.size()), nodes_[i].output_view,
                              nodes_[i].gradient_view, std::span(gradient_pointers_.data(), inputs.size()));
    if (step.stream != nullptr) stream_after_backward(i);
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      if (gradient_pointers_[k] == nullptr) continue;
      const auto input = static_cast<std::size_t>(inputs[k]);
      if (gradient_written_[input]) {
        const std::size_t count = static_cast<std::size_t>(step.batch) * element_count(plan_.nodes[input].plan.output);
        backend_.axpy(1.0f, nodes_[input].scratch.data(), nodes_[input].gradient.data(), count);
      }
      gradient_written_[input] = true;
    }
  }
}

void GraphModel::set_parameter_stream(ParameterStream* stream) {
  PSTRAIN_ASSERT(stream == nullptr || can_stream_parameters(), "a parameter stream for a model on device memory");
  stream_ = stream;
}

bool GraphModel::keep_table_gradients_sparse() {
  std::vector<std::size_t> table_nodes;
  for (std::size_t node = 0; node < nodes_.size(); ++node) {
    for (const std::size_t index : plan_.nodes[node].parameters) {
      if (!plan_.parameters[index].row_table) continue;
      if (!nodes_[node].layer->can_keep_table_gradient_sparse()) return false;  // all or none
      table_nodes.push_back(node);
      break;
    }
  }
  for (const std::size_t node : table_nodes) nodes_[node].layer->keep_table_gradient_sparse();
  sparse_table_nodes_ = std::move(table_nodes);
  return !sparse_table_nodes_.empty();
}

std::vector<TouchedRows> GraphModel::touched_rows() const {
  std::vector<TouchedRows> touched;
  for (const std::size_t node : sparse_table_nodes_) {
    const std::optional<TouchedRows> rows = nodes_[node].layer->touched_rows();
    PSTRAIN_ASSERT(rows.has_value(), "layer ", plan_.nodes[node].spec.name,
                   " keeps its table gradient sparse and names no rows");
    touched.push_back(*rows);
  }
  return touched;
}

void GraphModel::stream_before_forward(std::size_t node) const {
  if (nodes_[node].layer->streams_parameters()) return;
  for (const std::size_t index : plan_.nodes[node].parameters) {
    stream_->before_forward(plan_.parameters[index].offset, plan_.parameters[index].size);
  }
}

void GraphModel::stream_after_backward(std::size_t node) const {
  if (nodes_[node].layer->streams_parameters()) return;
  for (const std::size_t index : plan_.nodes[node].parameters) {
    stream_->after_backward(plan_.parameters[index].offset, plan_.parameters[index].size);
  }
}

int GraphModel::load_batch(std::span<const float> features, std::span<const std::int32_t> labels, std::size_t count) {
  if (count > max_batch_) {
    throw Error(ExitCode::kUsage,
                cat("batch of ", count, " samples exceeds the model's maximum batch size ", max_batch_));
  }
  PSTRAIN_ASSERT(features.size() == count * input_size(), "features hold ", features.size(), " floats, expected ",
                 count, " x ", input_size());
  PSTRAIN_ASSERT(labels.size() == count, "labels hold ", labels.size(), " values, expected ", count);
  backend_.copy_from_host(input_.data(), features.data(), features.size_bytes());
  backend_.copy_from_host(labels_.data(), labels.data(), labels.size_bytes());
  return static_cast<int>(count);
}

void GraphModel::check_flat_size(std::size_t size, std::size_t expected, const char* caller) const {
  PSTRAIN_ASSERT(size == expected, caller, " got ", size, " floats for a model of ", expected);
}

std::vector<std::string> GraphModel::kernel_descriptions() const {
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (const std::string kernel = nodes_[i].layer->kernel_description(); !kernel.empty()) {
      lines.push_back(cat(plan_.nodes[i].spec.name, ": ", kernel));
    }
  }
  return lines;
}

std::unique_ptr<GraphModel> make_graph_model(compute::Backend& backend, ModelPlan plan, std::size_t max_batch,
                                             float label_smoothing) {
  if (max_batch == 0) throw Error(ExitCode::kUsage, "batch size must be > 0");
  // Backend sizes are BLAS ints: the largest per-batch buffer (an im2col workspace counts k*k times a
  // convolution's output) must stay below 2^31 elements.
  constexpr auto kMaxInt = static_cast<std::size_t>(std::numeric_limits<int>::max());
  std::size_t widest = element_count(plan.input);
  for (const PlannedNode& node : plan.nodes) {
    std::size_t width = element_count(node.plan.output);
    if (node.spec.type == "conv2d") {  // pixels x (k * k * C)
      const Shape& weight = node.plan.parameters[0].shape;
      width = width / weight[0] * (element_count(weight) / weight[0]);
    }
    widest = std::max(widest, width);
  }
  if (max_batch > kMaxInt / widest) {
    throw Error(ExitCode::kUsage,
                cat("batch size ", max_batch, " is too large for layers of ", widest, " floats per sample"));
  }
  return std::make_unique<GraphModel>(backend, std::move(plan), max_batch, label_smoothing);
}

}  // namespace pstrain::nn
