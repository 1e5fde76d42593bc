#pragma once
// What lib/export's ONNX writers share (onnx_export.cc: the graph and the file; onnx_ctr_layers.cc: the
// click-through-rate layers): the model under construction and the value that flows between its layers. Float
// weights are not copied into the protobuf as they are added: the builder keeps where their values live (the
// saved model, or `keep`'s vectors) and places them once the whole graph is known, inline or in the external-data
// side file (place_weights), so that a table of gigabytes is never copied in memory.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <deque>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "inference/saved_model.h"
#include "nn/model_plan.h"

namespace pstrain::exporting {

namespace proto = ONNX_NAMESPACE;

// A tensor of the graph: its name and its per-sample shape as pstrain sees it. Rank-3 shapes are images, NCHW in
// the graph (HWC in pstrain); `ids` marks the int64 word ids of a language model's input.
struct Value {
  std::string name;
  nn::Shape shape;
  bool ids = false;
};

// One initializer whose bytes go to the side file, at `offset`: its values are `pieces` one after another.
struct ExternalTensor {
  std::uint64_t offset = 0;
  std::vector<std::span<const float>> pieces;
};

// A model being exported, and what its initializers' values are read from until the files are written.
struct BuiltModel {
  proto::ModelProto proto;
  std::deque<std::vector<float>> kept;   // weights made for the export (OIHW convolutions, pad rows)
  std::vector<ExternalTensor> external;  // empty: every weight inline
  std::uint64_t external_bytes = 0;      // the side file's size
};

class GraphBuilder {
 public:
  GraphBuilder(BuiltModel& built, const inference::SavedModel& model)
      : built_(built), graph_(*built.proto.mutable_graph()), model_(model) {}

  proto::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs, const std::string& output);
  static void set_ints(proto::NodeProto& node, const std::string& name, const std::vector<std::int64_t>& values);
  static void set_int(proto::NodeProto& node, const std::string& name, std::int64_t value);
  static void set_float(proto::NodeProto& node, const std::string& name, float value);

  // A float initializer named `name` of shape `dims` holding `pieces` one after another (row-major); they must
  // outlive the builder's model: the saved model's values, or `keep`'s. Returns `name`.
  std::string weight(const std::string& name, const std::vector<std::int64_t>& dims,
                     std::vector<std::span<const float>> pieces);
  std::string constant(const std::string& name, const std::vector<std::int64_t>& dims, std::span<const float> values) {
    return weight(name, dims, {values});
  }
  // Values made for the export, kept as long as the model.
  std::span<const float> keep(std::vector<float> values);
  // A small int64 initializer (axes, indices, a pad row), always inline.
  std::string int64_constant(const std::string& name, const std::vector<std::int64_t>& dims,
                             const std::vector<std::int64_t>& values);

  // The saved values of "<layer>.<tensor>" (trainable or state), as pstrain lays them out.
  std::span<const float> saved(const std::string& name) const;
  bool has_saved(const std::string& name) const;
  const inference::SavedModel& saved_model() const { return model_; }

  // Gives every float initializer its bytes: inline while the weights total at most `inline_limit` bytes, else
  // the largest go to the side file `location` (relative to the .onnx), largest first, until the rest fits; each
  // there starts at a multiple of 4096 bytes (ONNX's advice, for mmap).
  void place_weights(std::uint64_t inline_limit, const std::string& location);

 private:
  struct Pending {
    int initializer;  // index in graph_.initializer
    std::vector<std::span<const float>> pieces;
    std::uint64_t bytes;
  };

  BuiltModel& built_;
  proto::GraphProto& graph_;
  const inference::SavedModel& model_;
  std::vector<Pending> pending_;
};

// A node attribute as an integer or a number, `fallback` where the model file left it out.
std::size_t attribute(const nn::NodeSpec& node, const std::string& key, std::size_t fallback);
float number_attribute(const nn::NodeSpec& node, const std::string& key, float fallback);

// The click-through-rate layers (onnx_ctr_layers.cc), each writing the node(s) of one planned node; returns the
// name of its output, `out`.
//   embedding_bag    reads its graph input bag_rows_input(node), int64 [batch, fields, L] of hashed rows, padded
//                    with the table's row count R; its table gets an all-zero row R, so a pad adds nothing
//   dot_interaction  BOTTOM followed by the strict upper triangle of each sample's Gram matrix, row by row
//   fm               0.5 sum_k ((sum_i v_ik)^2 - sum_i v_ik^2), pstrain's own formula
std::string embedding_bag(GraphBuilder& graph, const nn::PlannedNode& node, const std::string& out);
std::string dot_interaction(GraphBuilder& graph, const std::vector<Value>& inputs, const std::string& out);
std::string fm(GraphBuilder& graph, const std::vector<Value>& inputs, const std::string& out);

// The graph input an embedding_bag layer reads: "<layer>.rows".
std::string bag_rows_input(const nn::PlannedNode& node);

// A table keyed by the raw id (inference/keyed_tables.h): the layer reads "<layer>.ids", int64 [batch, fields, L]
// of raw ids padded with kKeyedPadId (INT64_MIN, the id 2^63: an export refuses a table holding it), and maps them
// to rows in the graph with ai.onnx.ml's LabelEncoder: keys[k] -> k + 1, the pad -> n + 1 (a row of zeros, not
// counted by a mean), any other id -> 0, the default row.
inline constexpr std::int64_t kKeyedPadId = std::numeric_limits<std::int64_t>::min();
inline constexpr const char* kOnnxMlDomain = "ai.onnx.ml";
inline constexpr int kOnnxMlOpset = 2;  // LabelEncoder-2: keys_int64s, values_int64s, default_int64
std::string bag_ids_input(const nn::PlannedNode& node);
void declare_bag_ids_input(proto::ModelProto& model, const nn::PlannedNode& node, std::size_t keys);
std::string keyed_embedding_bag(GraphBuilder& graph, const nn::PlannedNode& node, std::span<const std::int64_t> keys,
                                const std::string& out);
// Declares that input, says in its doc string and in the model's metadata (key "pstrain.embedding_bag.<layer>")
// how to fill it: the fields, the hash's seed and rows, the pad row, the pooling.
void declare_bag_rows_input(proto::ModelProto& model, const nn::PlannedNode& node);

}  // namespace pstrain::exporting
