#pragma once
// What a model description means, computed without any backend: the graph's order, every node's input and
// output shapes, and the flat layouts of the trainable parameters and of the non-trainable state (names, shapes,
// offsets, initialisation). Servers, the shard plan and checkpoints read the layout from here and never build a
// model; a trainer's GraphModel is built from the same plan, so the two always agree.
//
// Parameter i of the layout occupies [offset, offset + size) of the flat vector that the parameter service
// shards; parameters are packed in graph order, each node's in the order its type lists them, named
// "<node>.<name>" ("conv1.weight", "bn1.gamma").
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "nn/layer.h"
#include "nn/layer_registry.h"
#include "nn/loss.h"
#include "nn/model.h"
#include "nn/model_spec.h"

namespace pstrain::nn {

struct PlannedNode {
  NodeSpec spec;
  const LayerType* type = nullptr;
  std::vector<int> inputs;  // indices into ModelPlan::nodes (earlier ones); kDataInput for the data
  std::vector<Shape> input_shapes;
  LayerPlan plan;
  std::vector<std::size_t> parameters;  // indices into ModelPlan::parameters, in plan.parameters order
  std::vector<std::size_t> state;       // indices into ModelPlan::state
  bool needs_gradient = false;          // it has parameters, or reads a node that has
};

struct ModelPlan {
  static constexpr int kDataInput = -1;

  ModelSpec spec;
  Shape input;  // one sample of the data
  std::size_t classes = 0;
  LossKind loss = LossKind::kSoftmaxCrossEntropy;  // the last line's loss=
  // 1 + the highest categorical field any layer reads (LayerPlan::categorical_fields): the batches must carry at
  // least these fields (core/jagged_ids.h, Model::set_categorical). 0: the model reads features only.
  std::size_t categorical_fields = 0;
  std::vector<PlannedNode> nodes;  // in evaluation order; the last one is the output (the logits)
  std::vector<ParameterInfo> parameters;
  std::vector<InitRule> parameter_init;  // parallel to parameters
  std::vector<ParameterInfo> state;
  std::vector<InitRule> state_init;  // parallel to state
  std::size_t parameter_count = 0;   // floats in the flat parameter vector
  std::size_t state_count = 0;
  double forward_flops = 0;  // per sample
};

// The data's sample shape as the graph sees it: {h, w} images become {h, w, 1}.
Shape model_input_shape(const std::vector<std::size_t>& data_sample_shape);

// Throws Error(kUsage) naming SOURCE:LINE and the problem: an unknown layer type, an input that names no layer,
// a cycle, a layer whose input shape it cannot take, a wrong number of inputs, an unknown attribute, a layer
// whose output nothing reads, an output that is not {classes} (softmax) or {1} over 2 classes (bce), a loss=
// elsewhere than on the last line.
ModelPlan plan_model(ModelSpec spec, const Shape& input, std::size_t classes);

// The documented initialisation, on the host, from the plan alone (servers start from it without a model): one
// std::mt19937_64 seeded with `seed` for the whole model, the kUniform tensors in layout order (one draw per
// element, initialization.h), the kCounterUniform ones (row tables) element by element from their own key
// (counter_init_key), ones and zeros drawing nothing. Identical on every rank and platform.
std::vector<float> initial_parameters(const ModelPlan& plan, std::uint64_t seed);
// The same values a block of at most `block` floats at a time, in layout order: visit(parameter index, first
// element of the block in that parameter, values), for the parameters `wanted` accepts (all without it): for
// ranks that keep a part of the model only. A kUniform parameter left out still advances the engine (its draws
// are skipped, not made); a kCounterUniform one costs nothing.
void visit_initial_parameters(const ModelPlan& plan, std::uint64_t seed, std::size_t block,
                              const std::function<void(std::size_t, std::size_t, std::span<const float>)>& visit,
                              const std::function<bool(std::size_t)>& wanted = {});
// Rows first_row, first_row + row_stride, ... of parameter `parameter` ({rows, width}, a kCounterUniform, kOnes or
// kZeros tensor) into `out` (out.size() / width rows, in that order): the values initial_parameters gives them,
// drawn for these rows alone (a server shard's rows of a row table). Throws Error(kInternal) for a kUniform one.
void initial_rows(const ModelPlan& plan, std::uint64_t seed, std::size_t parameter, std::uint64_t first_row,
                  std::uint64_t row_stride, std::span<float> out);
// The non-trainable state's start (running means 0, running variances 1).
std::vector<float> initial_state(const ModelPlan& plan);

// A table of every layer (name, type, output shape, parameters, forward FLOPs per sample) and the totals.
std::string describe_model(const ModelPlan& plan);

}  // namespace pstrain::nn
