#pragma once
// A model is a graph of layers over a compute Backend (graph_model.h; described by a model file or a preset,
// model_spec.h). All its parameters live in ONE flat float buffer (backend memory), concatenated in the order of
// parameters(); gradients mirror that layout. The parameter service shards this flat vector, so the layout is
// part of the contract: parameter i occupies [parameters()[i].offset, + size). The layout comes from the model
// description alone (model_plan.h), so ranks that never build a model agree on it.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "compute/backend.h"
#include "core/jagged_ids.h"
#include "nn/cached_lookups.h"
#include "nn/parameter_stream.h"
#include "nn/touched_rows.h"

namespace pstrain::nn {

struct ParameterInfo {
  std::string name;                // "fc1.weight", "fc1.bias", ... (dataset names in checkpoints)
  std::vector<std::size_t> shape;  // weight: {out, in} (as PyTorch); bias: {out}
  std::size_t offset = 0;          // into the flat vector
  std::size_t size = 0;            // product of shape
  bool row_table = false;          // looked up row by row by id (nn/layer.h TensorSpec::row_table)
};

struct BatchResult {
  double loss_sum = 0;      // sum of per-sample losses
  std::size_t correct = 0;  // samples whose arg-max is the label
  std::size_t count = 0;    // samples in the batch
};

class Model {
 public:
  virtual ~Model() = default;

  virtual const std::vector<ParameterInfo>& parameters() const = 0;
  virtual std::size_t parameter_count() const = 0;  // length of the flat vector
  virtual std::size_t input_size() const = 0;
  virtual std::size_t num_classes() const = 0;

  // Deterministic from the seed, identical on every rank and platform (no std:: distributions). Also resets the
  // non-trainable state.
  virtual void initialize(std::uint64_t seed) = 0;

  // Non-trainable state (batch-norm running statistics): never pushed nor updated by an optimizer; its own flat
  // layout, and copies in and out of host memory. Empty for models without such layers.
  virtual const std::vector<ParameterInfo>& state_layout() const = 0;
  virtual void get_state(std::span<float> host_out) const = 0;
  virtual void set_state(std::span<const float> host_in) = 0;

  // The key of the random draws of the next training steps (dropout masks), built by the caller from the seed,
  // the global step and the trainer (core/counter_random.h): a resumed step draws what the original drew.
  virtual void set_step_key(std::uint64_t key) = 0;
  // How many categorical fields the model's batches carry (1 + the highest field it reads, model_plan.h), 0 for
  // a model of features only; and the fields (host memory) of the samples the next train_batch or
  // evaluate_batch calls receive, one JaggedIds sample per sample, kept by the caller until then.
  virtual std::size_t categorical_fields() const { return 0; }
  virtual void set_categorical(const core::JaggedIds* fields) { static_cast<void>(fields); }
  // With tables held by the servers by rows: where the next batch's lookups sit in the tables' caches
  // (layer.h CachedLookups, filled by ps::TableClient), kept by the caller until then; null otherwise.
  virtual void set_cached_lookups(const CachedLookups* lookups) { static_cast<void>(lookups); }
  virtual void get_parameters(std::span<float> host_out) const = 0;
  virtual void set_parameters(std::span<const float> host_in) = 0;
  virtual void get_gradients(std::span<float> host_out) const = 0;
  // The flat parameter and gradient buffers themselves when the backend keeps them in host memory, else empty.
  // Lets a CPU trainer exchange them in place, without two copies of the model per step.
  virtual std::span<float> host_parameters() { return {}; }
  virtual std::span<const float> host_gradients() const { return {}; }
  // The same flat buffers in backend memory (device pointers on a GPU backend), for collectives that work in
  // place there (NCCL all-reduce).
  // "layer: kernel" for each layer whose kernels the backend chose (Layer::kernel_description), for the log.
  virtual std::vector<std::string> kernel_descriptions() const { return {}; }
  // The GPU time of the training steps since the last call, by phase (Backend::take_step_breakdown), for the log;
  // empty on the CPU. Starts a new count.
  virtual std::string take_step_breakdown() { return {}; }
  virtual float* backend_parameters() = 0;
  virtual float* backend_gradients() = 0;

  // Whether the model can report to a ParameterStream (parameter_stream.h): its parameters live in host memory.
  // Ask before giving an exchange the model's buffers to stream in place.
  virtual bool can_stream_parameters() const { return false; }
  // The listener of the next training steps, or null for none; only where can_stream_parameters().
  virtual void set_parameter_stream(ParameterStream* stream) { static_cast<void>(stream); }
  // Row tables with sparse gradients (Layer::keep_table_gradient_sparse): true when the model has row tables and
  // every one of them keeps its gradient sparse from now on, the caller then leaving the gradient buffer as each
  // training step leaves it; false (and nothing changed) otherwise. After each train_batch, touched_rows() names
  // every table's rows that step wrote gradient into: the rest of the gradient buffer's table rows are zero.
  virtual bool keep_table_gradients_sparse() { return false; }
  virtual std::vector<TouchedRows> touched_rows() const { return {}; }
  // Forward and backward on `count` samples (features host row-major count x input_size()).
  // Afterwards the gradient buffer holds d(mean loss over the batch)/d(parameters).
  virtual BatchResult train_batch(std::span<const float> features, std::span<const std::int32_t> labels,
                                  std::size_t count) = 0;
  // Forward only.
  virtual BatchResult evaluate_batch(std::span<const float> features, std::span<const std::int32_t> labels,
                                     std::size_t count) = 0;
  // evaluate_batch, and the logits (count x the output's floats per sample) copied to `host_logits`.
  virtual BatchResult evaluate_batch_logits(std::span<const float> features, std::span<const std::int32_t> labels,
                                            std::size_t count, std::span<float> host_logits) = 0;
};

struct MlpSpec {
  std::size_t input_size = 0;
  std::vector<std::size_t> hidden;  // {256, 128}
  std::size_t num_classes = 0;
  compute::Activation activation = compute::Activation::kRelu;
  std::size_t max_batch = 256;  // workspace is sized for this many samples; larger batches throw
};

// The `mlp` preset (presets.h): layers named fc1..fcN; the last one has no activation and feeds softmax
// cross-entropy.
std::unique_ptr<Model> make_mlp(compute::Backend& backend, const MlpSpec& spec);

// The `cnn` preset (presets.h), a convolutional network on channels-last images (NHWC, see compute/backend.h):
//   conv1 -> activation -> 2x2 max-pool (stride 2) -> conv2 -> activation -> max-pool -> ... -> flatten (h, w, c)
//   -> fc1 -> activation -> ... -> fcN (logits, softmax cross-entropy).
// Convolutions are stride 1 with 'same' zero padding ((kernel-1)/2), computed as im2col + one GEMM per batch.
// Parameters in order: conv1.weight {filters, kernel, kernel, in_channels} (channels-last, so NOT PyTorch's
// {out, in, kh, kw} order), conv1.bias {filters}, conv2..., fc1.weight {out, in}, fc1.bias, ...
struct CnnSpec {
  std::size_t height = 28, width = 28, channels = 1;
  std::vector<std::size_t> conv_filters = {32, 64};
  std::size_t kernel_size = 3;              // odd
  std::vector<std::size_t> hidden = {128};  // widths of the fully connected layers before the logits
  std::size_t num_classes = 10;
  compute::Activation activation = compute::Activation::kRelu;
  std::size_t max_batch = 256;
};

// Throws pstrain::Error(kUsage) for a spec no network can be built from (even kernel, image too small for the
// pools, zero filters ...).
std::unique_ptr<Model> make_cnn(compute::Backend& backend, const CnnSpec& spec);

}  // namespace pstrain::nn
