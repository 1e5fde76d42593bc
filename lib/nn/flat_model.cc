#include "nn/flat_model.h"

#include <random>
#include <utility>

#include "core/error.h"
#include "nn/initialization.h"

namespace pstrain::nn {

FlatModel::FlatModel(compute::Backend& backend, std::vector<ParameterInfo> layout, std::size_t input_size,
                     std::size_t num_classes, std::size_t max_batch)
    : backend_(backend), layout_(std::move(layout)), input_size_(input_size), num_classes_(num_classes),
      max_batch_(max_batch) {
  PSTRAIN_ASSERT(!layout_.empty() && layout_.size() % 2 == 0, "a layout of ", layout_.size(),
                 " entries is not (weight, bias) pairs");
  parameter_count_ = layout_.back().offset + layout_.back().size;
  parameters_ = compute::Buffer<float>(backend_, parameter_count_);
  gradients_ = compute::Buffer<float>(backend_, parameter_count_);
  backend_.fill(parameters_.data(), parameter_count_, 0.0f);
  backend_.fill(gradients_.data(), parameter_count_, 0.0f);
  input_ = compute::Buffer<float>(backend_, max_batch_ * input_size_);
  labels_ = compute::Buffer<std::int32_t>(backend_, max_batch_);
}

void FlatModel::initialize(std::uint64_t seed) {
  // One engine for the whole model, weights in layout order; biases stay 0 and consume nothing. Pinned by the
  // models' recipe tests: checkpoints and multi-rank runs rely on it.
  std::vector<float> host(parameter_count_, 0.0f);
  std::mt19937_64 engine(seed);
  for (std::size_t layer = 0; layer < layer_count(); ++layer) {
    const ParameterInfo& weight = layout_[2 * layer];
    fill_uniform(engine, weight_limit(layer), std::span<float>(host).subspan(weight.offset, weight.size));
  }
  set_parameters(host);
}

void FlatModel::get_parameters(std::span<float> host_out) const {
  check_flat_size(host_out.size(), "get_parameters");
  backend_.copy_to_host(host_out.data(), parameters_.data(), parameter_count_ * sizeof(float));
}

void FlatModel::set_parameters(std::span<const float> host_in) {
  check_flat_size(host_in.size(), "set_parameters");
  backend_.copy_from_host(parameters_.data(), host_in.data(), parameter_count_ * sizeof(float));
}

void FlatModel::get_gradients(std::span<float> host_out) const {
  check_flat_size(host_out.size(), "get_gradients");
  backend_.copy_to_host(host_out.data(), gradients_.data(), parameter_count_ * sizeof(float));
}

std::span<float> FlatModel::host_parameters() {
  if (!backend_.host_accessible()) return {};
  return {parameters_.data(), parameter_count_};
}

std::span<const float> FlatModel::host_gradients() const {
  if (!backend_.host_accessible()) return {};
  return {gradients_.data(), parameter_count_};
}

BatchResult FlatModel::train_batch(std::span<const float> features, std::span<const std::int32_t> labels,
                                   std::size_t count) {
  PSTRAIN_ASSERT(count > 0, "train_batch needs at least one sample");
  const int rows = load_batch(features, labels, count);
  const float* logits = forward(rows);
  // The loss writes d(mean loss)/d(logits) straight into the buffer backward() starts from.
  const auto loss = backend_.softmax_cross_entropy(logits, labels_.data(), logits_gradient(), rows,
                                                   static_cast<int>(num_classes_));
  backward(rows);
  return {loss.loss_sum, loss.correct, count};
}

BatchResult FlatModel::evaluate_batch(std::span<const float> features, std::span<const std::int32_t> labels,
                                      std::size_t count) {
  if (count == 0) return {};
  const int rows = load_batch(features, labels, count);
  const float* logits = forward(rows);
  const auto loss =
      backend_.softmax_cross_entropy(logits, labels_.data(), nullptr, rows, static_cast<int>(num_classes_));
  return {loss.loss_sum, loss.correct, count};
}

LayerView FlatModel::layer_view(std::size_t layer) const {
  PSTRAIN_ASSERT(layer < layer_count(), "layer ", layer, " of a model with ", layer_count(), " layers");
  const ParameterInfo& weight = layout_[2 * layer];
  const ParameterInfo& bias = layout_[2 * layer + 1];
  return {parameters_.data() + weight.offset, parameters_.data() + bias.offset, gradients_.data() + weight.offset,
          gradients_.data() + bias.offset};
}

std::vector<LayerView> FlatModel::layer_views(std::size_t first, std::size_t count) const {
  std::vector<LayerView> views;
  for (std::size_t layer = first; layer < first + count; ++layer) views.push_back(layer_view(layer));
  return views;
}

void FlatModel::check_flat_size(std::size_t size, const char* caller) const {
  PSTRAIN_ASSERT(size == parameter_count_, caller, " got ", size, " floats for a model of ", parameter_count_,
                 " parameters");
}

int FlatModel::load_batch(std::span<const float> features, std::span<const std::int32_t> labels, std::size_t count) {
  if (count > max_batch_) {
    throw Error(ExitCode::kUsage,
                cat("batch of ", count, " samples exceeds the model's maximum batch size ", max_batch_));
  }
  PSTRAIN_ASSERT(features.size() == count * input_size_, "features hold ", features.size(), " floats, expected ",
                 count, " x ", input_size_);
  PSTRAIN_ASSERT(labels.size() == count, "labels hold ", labels.size(), " values, expected ", count);
  backend_.copy_from_host(input_.data(), features.data(), features.size_bytes());
  backend_.copy_from_host(labels_.data(), labels.data(), labels.size_bytes());
  return static_cast<int>(count);
}

}  // namespace pstrain::nn
