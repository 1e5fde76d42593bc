#pragma once
// What every model here shares, so that the MLP and the CNN differ only in their layers: the ONE flat parameter
// buffer and ONE flat gradient buffer of model.h's contract, the input and label buffers for max_batch samples,
// the initialisation recipe, and the step itself (validate and copy the batch to the backend, forward, softmax
// cross-entropy, backward). Every buffer is allocated once, so a training step allocates nothing.
//
// The layout is one (weight, bias) pair per layer, in layer order, packed back to back from offset 0: layer i
// is layout[2i] and layout[2i + 1], and layer_view(i) points into the flat buffers there.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "compute/backend.h"
#include "nn/layer_view.h"
#include "nn/model.h"

namespace pstrain::nn {

class FlatModel : public Model {
 public:
  const std::vector<ParameterInfo>& parameters() const final { return layout_; }
  std::size_t parameter_count() const final { return parameter_count_; }
  std::size_t input_size() const final { return input_size_; }
  std::size_t num_classes() const final { return num_classes_; }

  void initialize(std::uint64_t seed) final;
  void get_parameters(std::span<float> host_out) const final;
  void set_parameters(std::span<const float> host_in) final;
  void get_gradients(std::span<float> host_out) const final;
  std::span<float> host_parameters() final;
  std::span<const float> host_gradients() const final;
  float* backend_parameters() final { return parameters_.data(); }
  float* backend_gradients() final { return gradients_.data(); }

  BatchResult train_batch(std::span<const float> features, std::span<const std::int32_t> labels,
                          std::size_t count) final;
  BatchResult evaluate_batch(std::span<const float> features, std::span<const std::int32_t> labels,
                             std::size_t count) final;

 protected:
  // Allocates the zeroed flat buffers for `layout` and the input and label buffers for max_batch samples.
  FlatModel(compute::Backend& backend, std::vector<ParameterInfo> layout, std::size_t input_size,
            std::size_t num_classes, std::size_t max_batch);

  // Runs the network on the first `rows` samples of input(); returns the logits, rows x num_classes().
  virtual const float* forward(int rows) = 0;
  // Where train_batch() has the loss write dL/d logits for backward() to start from.
  virtual float* logits_gradient() = 0;
  // After forward() on the same rows and with logits_gradient() filled: OVERWRITES every parameter gradient.
  virtual void backward(int rows) = 0;
  // Half-width a of layer i's U(-a, a) weights (see init_limit).
  virtual float weight_limit(std::size_t layer) const = 0;

  compute::Backend& backend() const { return backend_; }
  const float* input() const { return input_.data(); }
  std::size_t max_batch() const { return max_batch_; }
  std::size_t layer_count() const { return layout_.size() / 2; }
  LayerView layer_view(std::size_t layer) const;
  // Views of `count` consecutive layers from `first`.
  std::vector<LayerView> layer_views(std::size_t first, std::size_t count) const;

 private:
  void check_flat_size(std::size_t size, const char* caller) const;
  // Validates the batch and copies it into backend memory; returns the row count as the backend's int.
  int load_batch(std::span<const float> features, std::span<const std::int32_t> labels, std::size_t count);

  compute::Backend& backend_;
  std::vector<ParameterInfo> layout_;
  std::size_t parameter_count_;
  std::size_t input_size_;
  std::size_t num_classes_;
  std::size_t max_batch_;
  compute::Buffer<float> parameters_;
  compute::Buffer<float> gradients_;
  compute::Buffer<float> input_;
  compute::Buffer<std::int32_t> labels_;
};

}  // namespace pstrain::nn
