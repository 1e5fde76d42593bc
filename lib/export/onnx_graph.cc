#include "export/onnx_graph.h"

#include <algorithm>
#include <numeric>

#include "core/error.h"

namespace pstrain::exporting {

namespace {

// Where ONNX advises external tensors to start, so that a runtime can map them.
constexpr std::uint64_t kExternalAlignment = 4096;

void add_entry(proto::TensorProto& tensor, const std::string& key, const std::string& value) {
  proto::StringStringEntryProto& entry = *tensor.add_external_data();
  entry.set_key(key);
  entry.set_value(value);
}

}  // namespace

std::size_t attribute(const nn::NodeSpec& node, const std::string& key, std::size_t fallback) {
  const auto found = node.attributes.find(key);
  return found == node.attributes.end() ? fallback : std::stoul(found->second);
}

float number_attribute(const nn::NodeSpec& node, const std::string& key, float fallback) {
  const auto found = node.attributes.find(key);
  return found == node.attributes.end() ? fallback : std::stof(found->second);
}

proto::NodeProto& GraphBuilder::node(const std::string& op, const std::vector<std::string>& inputs,
                                     const std::string& output) {
  proto::NodeProto& added = *graph_.add_node();
  added.set_op_type(op);
  added.set_name(output);
  for (const std::string& input : inputs) added.add_input(input);
  added.add_output(output);
  return added;
}

void GraphBuilder::set_ints(proto::NodeProto& node, const std::string& name, const std::vector<std::int64_t>& values) {
  proto::AttributeProto& attribute = *node.add_attribute();
  attribute.set_name(name);
  attribute.set_type(proto::AttributeProto::INTS);
  for (const std::int64_t value : values) attribute.add_ints(value);
}

void GraphBuilder::set_int(proto::NodeProto& node, const std::string& name, std::int64_t value) {
  proto::AttributeProto& attribute = *node.add_attribute();
  attribute.set_name(name);
  attribute.set_type(proto::AttributeProto::INT);
  attribute.set_i(value);
}

void GraphBuilder::set_float(proto::NodeProto& node, const std::string& name, float value) {
  proto::AttributeProto& attribute = *node.add_attribute();
  attribute.set_name(name);
  attribute.set_type(proto::AttributeProto::FLOAT);
  attribute.set_f(value);
}

std::string GraphBuilder::weight(const std::string& name, const std::vector<std::int64_t>& dims,
                                 std::vector<std::span<const float>> pieces) {
  proto::TensorProto& tensor = *graph_.add_initializer();
  tensor.set_name(name);
  tensor.set_data_type(proto::TensorProto::FLOAT);
  for (const std::int64_t dim : dims) tensor.add_dims(dim);
  std::uint64_t bytes = 0;
  for (const std::span<const float> piece : pieces) bytes += piece.size_bytes();
  const auto elements = std::accumulate(dims.begin(), dims.end(), std::int64_t{1}, std::multiplies<>());
  PSTRAIN_ASSERT(bytes == static_cast<std::uint64_t>(elements) * sizeof(float), "initializer ", name, " holds ", bytes,
                 " bytes for ", elements, " floats");
  pending_.push_back({graph_.initializer_size() - 1, std::move(pieces), bytes});
  return name;
}

std::span<const float> GraphBuilder::keep(std::vector<float> values) {
  built_.kept.push_back(std::move(values));
  return built_.kept.back();
}

std::string GraphBuilder::int64_constant(const std::string& name, const std::vector<std::int64_t>& dims,
                                         const std::vector<std::int64_t>& values) {
  proto::TensorProto& tensor = *graph_.add_initializer();
  tensor.set_name(name);
  tensor.set_data_type(proto::TensorProto::INT64);
  for (const std::int64_t dim : dims) tensor.add_dims(dim);
  for (const std::int64_t value : values) tensor.add_int64_data(value);
  return name;
}

std::span<const float> GraphBuilder::saved(const std::string& name) const {
  for (const nn::ParameterInfo& info : model_.plan.parameters) {
    if (info.name == name) return std::span<const float>(model_.parameters).subspan(info.offset, info.size);
  }
  for (const nn::ParameterInfo& info : model_.plan.state) {
    if (info.name == name) return std::span<const float>(model_.state).subspan(info.offset, info.size);
  }
  PSTRAIN_ASSERT(false, "no saved tensor ", name);
  return {};
}

bool GraphBuilder::has_saved(const std::string& name) const {
  return std::any_of(model_.plan.parameters.begin(), model_.plan.parameters.end(),
                     [&](const nn::ParameterInfo& info) { return info.name == name; });
}

void GraphBuilder::place_weights(std::uint64_t inline_limit, const std::string& location) {
  std::uint64_t inline_bytes = 0;
  for (const Pending& weight : pending_) inline_bytes += weight.bytes;
  // Largest first, and in graph order among equals, so that the same model always splits the same way.
  std::vector<const Pending*> order;
  for (const Pending& weight : pending_) order.push_back(&weight);
  std::stable_sort(order.begin(), order.end(), [](const Pending* a, const Pending* b) { return a->bytes > b->bytes; });
  std::uint64_t offset = 0;
  for (const Pending* weight : order) {
    if (inline_bytes <= inline_limit) break;
    inline_bytes -= weight->bytes;
    offset = (offset + kExternalAlignment - 1) / kExternalAlignment * kExternalAlignment;
    proto::TensorProto& tensor = *graph_.mutable_initializer(weight->initializer);
    tensor.set_data_location(proto::TensorProto::EXTERNAL);
    add_entry(tensor, "location", location);
    add_entry(tensor, "offset", std::to_string(offset));
    add_entry(tensor, "length", std::to_string(weight->bytes));
    built_.external.push_back({offset, weight->pieces});
    offset += weight->bytes;
  }
  built_.external_bytes = offset;
  for (const Pending& weight : pending_) {
    proto::TensorProto& tensor = *graph_.mutable_initializer(weight.initializer);
    if (tensor.data_location() == proto::TensorProto::EXTERNAL) continue;
    std::string& raw = *tensor.mutable_raw_data();
    raw.reserve(weight.bytes);
    for (const std::span<const float> piece : weight.pieces) {
      raw.append(reinterpret_cast<const char*>(piece.data()), piece.size_bytes());
    }
  }
  pending_.clear();
}

}  // namespace pstrain::exporting
