#pragma once
// The layer contract. A layer TYPE (registered in layer_registry.h) turns a node of a model description and the
// shapes of its inputs into a LayerPlan without any backend: its output shape, its trainable parameters and
// non-trainable state (names, shapes, initialisation), its forward cost. That is all that servers, the shard
// plan and checkpoints need. Only a trainer then creates the Layer object itself, over a compute::Backend, with
// its parameters as views into the model's one flat parameter and gradient buffers (the parameter service
// ships those as one vector) and its state as views into the model's flat state buffer.
//
// A Layer owns its workspaces (allocated once, for max_batch samples) but not its inputs, output or their
// gradients: the graph (graph_model.h) holds one output buffer and one output-gradient buffer per node.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "compute/backend.h"
#include "core/jagged_ids.h"
#include "nn/cached_lookups.h"
#include "nn/layer_attributes.h"
#include "nn/parameter_stream.h"
#include "nn/shape.h"
#include "nn/touched_rows.h"

namespace pstrain::nn {

// How a parameter or state tensor starts. kUniform consumes one draw of the model's initialisation engine per
// element (initialization.h); the others consume nothing. kCounterUniform draws each element from the
// counter-based generator (core/counter_random.h) keyed by the seed and the tensor's name: any element can be
// drawn on its own, so that a parameter server draws only its own rows of a row table.
struct InitRule {
  enum class Kind { kZeros, kOnes, kUniform, kCounterUniform };
  Kind kind = Kind::kZeros;
  float limit = 0;  // kUniform, kCounterUniform: U(-limit, limit)
};

struct TensorSpec {
  std::string name;  // the layer's own name for it ("weight", "bias", "gamma", "running_mean")
  Shape shape;
  InitRule init;
  // A table {rows, width} whose rows the layer looks up by the integer ids of its input, so that a step touches
  // only a few rows: the parameter servers can hold and update it row by row (ps/table_plan.h).
  bool row_table = false;
};

struct LayerPlan {
  Shape output;
  std::vector<TensorSpec> parameters;  // trainable: pushed, pulled, updated by the optimizer
  std::vector<TensorSpec> state;       // non-trainable: kept by the trainers, saved with the parameters
  double forward_flops = 0;            // per sample; multiply-add counts 2
  // For a layer that looks up categorical ids (embedding_bag): the fields (core/jagged_ids.h) it reads from
  // StepContext::categorical, so the model needs each batch's fields as well as its features, and the seed of the
  // hash that maps their ids to its table's rows (nn/id_hash.h), so that servers can resolve ids as it does.
  std::vector<std::size_t> categorical_fields;
  std::uint64_t id_hash_seed = 0;
  // The rows its ids hash into (the whole table's), kept when a trainer's model cuts the table to a cache of one
  // batch's rows (ps/model_tables.h cut_model_plan), and then which of the servers' row tables it is: its
  // lookups' cache rows are StepContext::cached_lookups->at(*row_table).
  std::uint64_t hashed_rows = 0;
  std::optional<std::size_t> row_table;
};

// One parameter of a created layer, in backend memory.
struct ParameterView {
  float* value = nullptr;
  float* gradient = nullptr;
  std::size_t offset = 0;  // of value and gradient in the model's flat buffers (model.h)
};

struct LayerBuild {
  compute::Backend& backend;
  std::vector<Shape> inputs;
  LayerPlan plan;
  std::vector<ParameterView> parameters;  // in plan.parameters order
  std::vector<float*> state;              // in plan.state order
  std::size_t max_batch = 0;
  std::uint64_t index = 0;  // position in the graph: part of the dropout key
};

// What changes from one call to the next.
struct StepContext {
  int batch = 0;
  bool training = false;         // batch norm uses batch statistics, dropout drops
  std::uint64_t random_key = 0;  // the step's key (seed, step, trainer); layers mix in their index
  // Training with communication behind computation: null otherwise. Only layers that stream their own
  // parameters (Layer::streams_parameters) call it; the graph reports the others'.
  ParameterStream* stream = nullptr;
  // The batch's categorical fields (host memory, `batch` samples), for the layers that read them (LayerPlan::
  // categorical_fields); null for a model that reads none.
  const core::JaggedIds* categorical = nullptr;
  // Where the batch's lookups sit in the tables' caches (CachedLookups), when the servers hold the tables by
  // rows; null otherwise.
  const CachedLookups* cached_lookups = nullptr;
};

class Layer {
 public:
  virtual ~Layer() = default;
  // inputs[i] is batch x element_count(input shape i); output is batch x element_count(plan.output).
  virtual void forward(const StepContext& step, std::span<const float* const> inputs, float* output) = 0;
  // After forward() with the same step and inputs: OVERWRITES every parameter gradient and every input gradient
  // that is not null (a null one is not needed: the data, or an input nobody trains).
  virtual void backward(const StepContext& step, std::span<const float* const> inputs, const float* output,
                        const float* output_gradient, std::span<float* const> input_gradients) = 0;
  // How the layer computes where the backend offers a choice (a convolution: "oneDNN direct (...)" or "im2col +
  // gemm"), for the log; empty elsewhere.
  virtual std::string kernel_description() const { return {}; }
  // True when forward() and backward() report this layer's parameters to step.stream themselves
  // (parameter_stream.h), in parts that suit their computation.
  virtual bool streams_parameters() const { return false; }
  // A layer with a row table whose backward touches few of its rows may keep the table's gradient sparse: after
  // keep_table_gradient_sparse() (once, before training, only where it can), backward no longer overwrites the
  // whole table gradient: it zeroes the rows it touched the step before and writes the rows it touches now, which
  // touched_rows() then names. The caller promises to leave the gradient buffer as backward left it (read it,
  // never write it), so the rows outside touched_rows() are zero, as a whole overwrite would have left them.
  virtual bool can_keep_table_gradient_sparse() const { return false; }
  virtual void keep_table_gradient_sparse() {}
  virtual std::optional<TouchedRows> touched_rows() const { return std::nullopt; }
};

}  // namespace pstrain::nn
