// The ONNX forms of the click-through-rate layers (onnx_graph.h). ONNX has no operator for a bag of 64-bit ids
// hashed with splitmix64 (opset 13 has neither a bitwise xor nor a documented wrapping 64-bit multiply), so the
// graph reads each embedding_bag's rows already hashed, padded to one length: a Gather of the rows and a
// ReduceSum over the bag give the sum; the pad row R of the table is zeros, so pads add nothing, and a mean
// divides by the count of rows below R (at least 1: an empty bag is zeros, as in pstrain).
// A table keyed by the raw id (inference/keyed_tables.h) needs no hash: the graph reads the raw ids, padded with
// kKeyedPadId, and maps them to rows itself with ai.onnx.ml's LabelEncoder (keys[k] -> k + 1, the pad id -> the
// pad row n + 1, every other id -> 0, the default row), then pools as above.
#include <algorithm>
#include <numeric>

#include "core/error.h"
#include "export/onnx_graph.h"

namespace pstrain::exporting {

namespace {

std::int64_t int64(std::size_t value) {
  return static_cast<std::int64_t>(value);
}

// Field indices as the model file lists them: "0,1,2".
std::string field_list(const std::vector<std::size_t>& fields) {
  std::string text;
  for (const std::size_t field : fields) {
    if (!text.empty()) text += ',';
    text += std::to_string(field);
  }
  return text;
}

std::string pooling(const nn::PlannedNode& node) {
  const auto found = node.spec.attributes.find("pooling");
  return found == node.spec.attributes.end() ? "sum" : found->second;
}

// ReduceSum over `axis` (opset 13 takes the axes as an input).
std::string reduce_sum(GraphBuilder& graph, const std::string& input, std::int64_t axis, bool keep_dims,
                       const std::string& out) {
  const std::string axes = graph.int64_constant(out + "/axes", {1}, {axis});
  GraphBuilder::set_int(graph.node("ReduceSum", {input, axes}, out), "keepdims", keep_dims ? 1 : 0);
  return out;
}

// The inputs' vectors as one [batch, n, d] tensor: a {d} input is one vector, a {k, d} input k of them.
std::string stack(GraphBuilder& graph, const std::vector<Value>& inputs, const std::string& out) {
  std::vector<std::string> parts;
  for (const Value& input : inputs) {
    if (input.shape.size() == 2) {
      parts.push_back(input.name);
      continue;
    }
    const std::string axes = graph.int64_constant(cat(out, "/", parts.size(), "/axes"), {1}, {1});
    parts.push_back(graph.node("Unsqueeze", {input.name, axes}, cat(out, "/", parts.size())).output(0));
  }
  if (parts.size() == 1) return parts[0];
  GraphBuilder::set_int(graph.node("Concat", parts, out), "axis", 1);
  return out;
}

}  // namespace

std::string bag_rows_input(const nn::PlannedNode& node) {
  return node.spec.name + ".rows";
}

std::string bag_ids_input(const nn::PlannedNode& node) {
  return node.spec.name + ".ids";
}

namespace {

void declare_bags_input(proto::ModelProto& model, const nn::PlannedNode& node, const std::string& input,
                        const std::string& how, const std::string& what) {
  proto::ValueInfoProto& value = *model.mutable_graph()->add_input();
  value.set_name(input);
  value.set_doc_string(cat("embedding_bag ", node.spec.name, ": per sample and field (", how, "), ", what));
  proto::TypeProto::Tensor& tensor = *value.mutable_type()->mutable_tensor_type();
  tensor.set_elem_type(proto::TensorProto::INT64);
  tensor.mutable_shape()->add_dim()->set_dim_param("batch");
  tensor.mutable_shape()->add_dim()->set_dim_value(int64(node.plan.categorical_fields.size()));
  tensor.mutable_shape()->add_dim()->set_dim_param(node.spec.name + ".bag");
  proto::StringStringEntryProto& entry = *model.add_metadata_props();
  entry.set_key("pstrain.embedding_bag." + node.spec.name);
  entry.set_value(cat("input=", input, " ", how));
}

// The bags of `rows` (int64 [batch, k, L] rows of `weight`, padded with its last row, `pad`, of zeros) pooled
// as the layer pools them: a Gather and a ReduceSum over the bag; a mean divides by the rows below `pad`.
std::string pool_bags(GraphBuilder& graph, const nn::PlannedNode& node, const std::string& weight,
                      const std::string& rows, std::int64_t pad, const std::string& out) {
  GraphBuilder::set_int(graph.node("Gather", {weight, rows}, out + "/vectors"), "axis", 0);  // [batch, k, L, D]
  const bool one_field = node.plan.output.size() == 1;
  const bool mean = pooling(node) == "mean";
  std::string pooled = reduce_sum(graph, out + "/vectors", 2, false, one_field || mean ? out + "/sum" : out);
  if (mean) {
    graph.node("Less", {rows, graph.int64_constant(out + "/pad", {}, {pad})}, out + "/real");
    GraphBuilder::set_int(graph.node("Cast", {out + "/real"}, out + "/realf"), "to", proto::TensorProto::FLOAT);
    reduce_sum(graph, out + "/realf", 2, true, out + "/count");  // [batch, k, 1]
    const float one = 1.0f;
    graph.node("Max", {out + "/count", graph.constant(out + "/one", {}, graph.keep({one}))}, out + "/divisor");
    pooled = graph.node("Div", {pooled, out + "/divisor"}, one_field ? out + "/mean" : out).output(0);
  }
  if (one_field) GraphBuilder::set_int(graph.node("Flatten", {pooled}, out), "axis", 1);  // [batch, 1, D] -> {D}
  return out;
}

// The table's saved rows and one more of zeros, the pad row.
std::string table_with_pad_row(GraphBuilder& graph, const nn::PlannedNode& node) {
  const std::string name = node.spec.name + ".weight";
  const nn::Shape& table = node.plan.parameters[0].shape;
  return graph.weight(name, {int64(table[0] + 1), int64(table[1])},
                      {graph.saved(name), graph.keep(std::vector<float>(table[1], 0.0f))});
}

}  // namespace

void declare_bag_rows_input(proto::ModelProto& model, const nn::PlannedNode& node) {
  const std::uint64_t rows = node.plan.hashed_rows;
  declare_bags_input(model, node, bag_rows_input(node),
                     cat("fields=", field_list(node.plan.categorical_fields), " seed=", node.plan.id_hash_seed,
                         " rows=", rows, " pad=", rows, " pooling=", pooling(node)),
                     cat("the bag's rows splitmix64(id + splitmix64(seed)) mod rows, padded with ", rows));
}

void declare_bag_ids_input(proto::ModelProto& model, const nn::PlannedNode& node, std::size_t keys) {
  declare_bags_input(model, node, bag_ids_input(node),
                     cat("fields=", field_list(node.plan.categorical_fields), " keys=exact held=", keys,
                         " pad=", kKeyedPadId, " pooling=", pooling(node)),
                     cat("the bag's raw ids as int64 (the 64 bits as they are), padded with ", kKeyedPadId));
}

std::string embedding_bag(GraphBuilder& graph, const nn::PlannedNode& node, const std::string& out) {
  const std::string& name = node.spec.name;
  const nn::Shape& table = node.plan.parameters[0].shape;  // {R, D}
  PSTRAIN_ASSERT(table[0] == node.plan.hashed_rows, "embedding_bag ", name, " holds ", table[0],
                 " rows of a table hashed into ", node.plan.hashed_rows, " (a trainer's cache, not a saved model)");
  return pool_bags(graph, node, table_with_pad_row(graph, node), bag_rows_input(node), int64(table[0]), out);
}

std::string keyed_embedding_bag(GraphBuilder& graph, const nn::PlannedNode& node, std::span<const std::int64_t> keys,
                                const std::string& out) {
  const std::string& name = node.spec.name;
  const nn::Shape& table = node.plan.parameters[0].shape;  // {n + 1, D}: the default row, then the keys' rows
  PSTRAIN_ASSERT(table[0] == keys.size() + 1, "embedding_bag ", name, " holds ", table[0], " rows for ", keys.size(),
                 " keys");
  if (std::binary_search(keys.begin(), keys.end(), kKeyedPadId)) {
    throw Error(ExitCode::kUsage, cat("table ", name, " holds a row of id ", kKeyedPadId,
                                      ", the id the exported graph pads bags with; it cannot be exported"));
  }
  const auto pad = int64(keys.size() + 1);
  std::vector<std::int64_t> map_from(keys.begin(), keys.end());
  map_from.push_back(kKeyedPadId);
  std::vector<std::int64_t> map_to(keys.size() + 1);
  std::iota(map_to.begin(), map_to.end(), std::int64_t{1});  // keys[k] -> k + 1, the pad id -> n + 1
  proto::NodeProto& encoder = graph.node("LabelEncoder", {bag_ids_input(node)}, out + "/rows");
  encoder.set_domain(kOnnxMlDomain);
  GraphBuilder::set_ints(encoder, "keys_int64s", map_from);
  GraphBuilder::set_ints(encoder, "values_int64s", map_to);
  GraphBuilder::set_int(encoder, "default_int64", 0);  // an id without a row of its own: the default row
  return pool_bags(graph, node, table_with_pad_row(graph, node), out + "/rows", pad, out);
}

std::string dot_interaction(GraphBuilder& graph, const std::vector<Value>& inputs, const std::string& out) {
  std::size_t n = 0;
  for (const Value& input : inputs) n += input.shape.size() == 2 ? input.shape[0] : 1;
  const std::string z = stack(graph, inputs, out + "/stack");  // [batch, n, d]
  GraphBuilder::set_ints(graph.node("Transpose", {z}, out + "/stack_t"), "perm", {0, 2, 1});
  graph.node("MatMul", {z, out + "/stack_t"}, out + "/gram");
  GraphBuilder::set_int(graph.node("Flatten", {out + "/gram"}, out + "/gram_flat"), "axis", 1);
  std::vector<std::int64_t> upper;  // (i, j), i < j, row by row: pstrain's order
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i + 1; j < n; ++j) upper.push_back(int64(i * n + j));
  }
  const std::string pairs = graph.int64_constant(out + "/pairs", {int64(upper.size())}, upper);
  GraphBuilder::set_int(graph.node("Gather", {out + "/gram_flat", pairs}, out + "/dots"), "axis", 1);
  GraphBuilder::set_int(graph.node("Concat", {inputs[0].name, out + "/dots"}, out), "axis", 1);
  return out;
}

std::string fm(GraphBuilder& graph, const std::vector<Value>& inputs, const std::string& out) {
  const std::string z = stack(graph, inputs, out + "/stack");  // [batch, n, d]
  reduce_sum(graph, z, 1, false, out + "/sum");
  graph.node("Mul", {out + "/sum", out + "/sum"}, out + "/sum_squared");
  graph.node("Mul", {z, z}, out + "/squares");
  reduce_sum(graph, out + "/squares", 1, false, out + "/squares_sum");
  graph.node("Sub", {out + "/sum_squared", out + "/squares_sum"}, out + "/difference");
  reduce_sum(graph, out + "/difference", 1, true, out + "/total");  // [batch, 1]
  const float half = 0.5f;
  graph.node("Mul", {out + "/total", graph.constant(out + "/half", {}, graph.keep({half}))}, out);
  return out;
}

}  // namespace pstrain::exporting
