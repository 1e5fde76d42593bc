// The multi-layer perceptron: fc1..fcN Dense layers, the spec's activation after every hidden layer, softmax
// cross-entropy on the last. Parameters and gradients are single flat backend buffers laid out as
// fc1.weight, fc1.bias, fc2.weight, ...; every workspace is allocated once, for spec.max_batch rows, so a
// training step allocates nothing.
#include <random>
#include <vector>

#include "core/error.h"
#include "nn/dense.h"
#include "nn/initialization.h"
#include "nn/mlp_layout.h"
#include "nn/model.h"

namespace pstrain::nn {
namespace {

using compute::Backend;
using compute::Buffer;

class Mlp final : public Model {
 public:
  Mlp(Backend& backend, const MlpSpec& spec)
      : backend_(backend), spec_(spec), layout_(dense_parameter_layout(mlp_layer_widths(spec))) {
    parameter_count_ = layout_.back().offset + layout_.back().size;
    parameters_ = Buffer<float>(backend_, parameter_count_);
    gradients_ = Buffer<float>(backend_, parameter_count_);
    backend_.fill(parameters_.data(), parameter_count_, 0.0f);
    backend_.fill(gradients_.data(), parameter_count_, 0.0f);
    input_ = Buffer<float>(backend_, spec_.max_batch * spec_.input_size);
    labels_ = Buffer<std::int32_t>(backend_, spec_.max_batch);

    const std::vector<std::size_t> widths = mlp_layer_widths(spec_);
    for (std::size_t layer = 0; layer + 1 < widths.size(); ++layer) {
      const ParameterInfo& weight = layout_[2 * layer];
      const ParameterInfo& bias = layout_[2 * layer + 1];
      layers_.emplace_back(backend_, widths[layer], widths[layer + 1],
                           DenseView{parameters_.data() + weight.offset, parameters_.data() + bias.offset,
                                     gradients_.data() + weight.offset, gradients_.data() + bias.offset});
      const bool hidden = layer + 2 < widths.size();
      const std::size_t rows_times_width = spec_.max_batch * widths[layer + 1];
      Workspace workspace;
      workspace.output = Buffer<float>(backend_, rows_times_width);
      workspace.output_gradient = Buffer<float>(backend_, rows_times_width);
      if (hidden) {
        workspace.activated = Buffer<float>(backend_, rows_times_width);
        workspace.activated_gradient = Buffer<float>(backend_, rows_times_width);
      }
      workspaces_.push_back(std::move(workspace));
    }
  }

  const std::vector<ParameterInfo>& parameters() const override { return layout_; }
  std::size_t parameter_count() const override { return parameter_count_; }
  std::size_t input_size() const override { return spec_.input_size; }
  std::size_t num_classes() const override { return spec_.num_classes; }

  void initialize(std::uint64_t seed) override {
    std::vector<float> host(parameter_count_, 0.0f);  // biases stay 0
    std::mt19937_64 engine(seed);
    for (std::size_t layer = 0; layer < layers_.size(); ++layer) {
      const ParameterInfo& weight = layout_[2 * layer];
      const float limit = init_limit(spec_.activation, layers_[layer].inputs(), layers_[layer].outputs());
      fill_uniform(engine, limit, std::span<float>(host).subspan(weight.offset, weight.size));
    }
    set_parameters(host);
  }

  void get_parameters(std::span<float> host_out) const override {
    check_flat_size(host_out.size(), "get_parameters");
    backend_.copy_to_host(host_out.data(), parameters_.data(), parameter_count_ * sizeof(float));
  }

  void set_parameters(std::span<const float> host_in) override {
    check_flat_size(host_in.size(), "set_parameters");
    backend_.copy_from_host(parameters_.data(), host_in.data(), parameter_count_ * sizeof(float));
  }

  void get_gradients(std::span<float> host_out) const override {
    check_flat_size(host_out.size(), "get_gradients");
    backend_.copy_to_host(host_out.data(), gradients_.data(), parameter_count_ * sizeof(float));
  }

  std::span<float> host_parameters() override {
    if (!backend_.host_accessible()) return {};
    return {parameters_.data(), parameter_count_};
  }
  std::span<const float> host_gradients() const override {
    if (!backend_.host_accessible()) return {};
    return {gradients_.data(), parameter_count_};
  }

  float* backend_parameters() override { return parameters_.data(); }
  float* backend_gradients() override { return gradients_.data(); }

  BatchResult train_batch(std::span<const float> features, std::span<const std::int32_t> labels,
                          std::size_t count) override {
    PSTRAIN_ASSERT(count > 0, "train_batch needs at least one sample");
    const int rows = load_batch(features, labels, count);
    forward(rows);
    // The loss writes d(mean loss)/d(logits) straight into the last layer's output gradient.
    const auto loss = backend_.softmax_cross_entropy(workspaces_.back().output.data(), labels_.data(),
                                                     workspaces_.back().output_gradient.data(), rows,
                                                     static_cast<int>(spec_.num_classes));
    backward(rows);
    return {loss.loss_sum, loss.correct, count};
  }

  BatchResult evaluate_batch(std::span<const float> features, std::span<const std::int32_t> labels,
                             std::size_t count) override {
    if (count == 0) return {};
    const int rows = load_batch(features, labels, count);
    forward(rows);
    const auto loss = backend_.softmax_cross_entropy(workspaces_.back().output.data(), labels_.data(), nullptr, rows,
                                                     static_cast<int>(spec_.num_classes));
    return {loss.loss_sum, loss.correct, count};
  }

 private:
  // Per-layer activations and their gradients, spec.max_batch rows each.
  struct Workspace {
    Buffer<float> output;              // x W^T + b (the logits for the last layer)
    Buffer<float> output_gradient;     // dL/d output
    Buffer<float> activated;           // activation(output); hidden layers only
    Buffer<float> activated_gradient;  // dL/d activated; hidden layers only
  };

  void check_flat_size(std::size_t size, const char* caller) const {
    PSTRAIN_ASSERT(size == parameter_count_, caller, " got ", size, " floats for a model of ", parameter_count_,
                   " parameters");
  }

  // Validates the batch and copies it into backend memory; returns the row count as the backend's int.
  int load_batch(std::span<const float> features, std::span<const std::int32_t> labels, std::size_t count) {
    if (count > spec_.max_batch) {
      throw Error(ExitCode::kUsage,
                  cat("batch of ", count, " samples exceeds the model's maximum batch size ", spec_.max_batch));
    }
    PSTRAIN_ASSERT(features.size() == count * spec_.input_size, "features hold ", features.size(),
                   " floats, expected ", count, " x ", spec_.input_size);
    PSTRAIN_ASSERT(labels.size() == count, "labels hold ", labels.size(), " values, expected ", count);
    backend_.copy_from_host(input_.data(), features.data(), features.size_bytes());
    backend_.copy_from_host(labels_.data(), labels.data(), labels.size_bytes());
    return static_cast<int>(count);
  }

  const float* layer_input(std::size_t layer) const {
    return layer == 0 ? input_.data() : workspaces_[layer - 1].activated.data();
  }

  void forward(int rows) {
    for (std::size_t layer = 0; layer < layers_.size(); ++layer) {
      Workspace& workspace = workspaces_[layer];
      layers_[layer].forward(layer_input(layer), workspace.output.data(), rows);
      if (is_hidden(layer)) {
        backend_.activation_forward(spec_.activation, workspace.output.data(), workspace.activated.data(),
                                    static_cast<std::size_t>(rows) * layers_[layer].outputs());
      }
    }
  }

  // Expects the last workspace's output_gradient to hold dL/d logits.
  void backward(int rows) {
    for (std::size_t layer = layers_.size(); layer-- > 0;) {
      float* input_gradient = layer == 0 ? nullptr : workspaces_[layer - 1].activated_gradient.data();
      layers_[layer].backward(layer_input(layer), workspaces_[layer].output_gradient.data(), input_gradient, rows);
      if (layer > 0) {
        Workspace& below = workspaces_[layer - 1];
        backend_.activation_backward(spec_.activation, below.activated.data(), below.activated_gradient.data(),
                                     below.output_gradient.data(),
                                     static_cast<std::size_t>(rows) * layers_[layer - 1].outputs());
      }
    }
  }

  bool is_hidden(std::size_t layer) const { return layer + 1 < layers_.size(); }

  Backend& backend_;
  MlpSpec spec_;
  std::vector<ParameterInfo> layout_;
  std::size_t parameter_count_ = 0;
  Buffer<float> parameters_;
  Buffer<float> gradients_;
  Buffer<float> input_;
  Buffer<std::int32_t> labels_;
  std::vector<Dense> layers_;
  std::vector<Workspace> workspaces_;
};

}  // namespace

std::unique_ptr<Model> make_mlp(compute::Backend& backend, const MlpSpec& spec) {
  validate_mlp_spec(spec);
  return std::make_unique<Mlp>(backend, spec);
}

}  // namespace pstrain::nn
