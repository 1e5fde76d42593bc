#include "export/onnx_export.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <map>

#include "core/error.h"
#include "core/files.h"

namespace pstrain::exporting {

namespace {

namespace proto = ONNX_NAMESPACE;

// A tensor of the graph: its name and its per-sample shape as pstrain sees it. Rank-3 shapes are images, NCHW in
// the graph (HWC in pstrain); `ids` marks the int64 word ids of a language model's input.
struct Value {
  std::string name;
  nn::Shape shape;
  bool ids = false;
};

std::size_t attribute(const nn::NodeSpec& node, const std::string& key, std::size_t fallback) {
  const auto found = node.attributes.find(key);
  return found == node.attributes.end() ? fallback : std::stoul(found->second);
}

float number_attribute(const nn::NodeSpec& node, const std::string& key, float fallback) {
  const auto found = node.attributes.find(key);
  return found == node.attributes.end() ? fallback : std::stof(found->second);
}

class GraphBuilder {
 public:
  GraphBuilder(proto::GraphProto& graph, const inference::SavedModel& model) : graph_(graph), model_(model) {}

  proto::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs, const std::string& output) {
    proto::NodeProto& added = *graph_.add_node();
    added.set_op_type(op);
    added.set_name(output);
    for (const std::string& input : inputs) added.add_input(input);
    added.add_output(output);
    return added;
  }

  static void set_ints(proto::NodeProto& node, const std::string& name, const std::vector<std::int64_t>& values) {
    proto::AttributeProto& attribute = *node.add_attribute();
    attribute.set_name(name);
    attribute.set_type(proto::AttributeProto::INTS);
    for (const std::int64_t value : values) attribute.add_ints(value);
  }
  static void set_int(proto::NodeProto& node, const std::string& name, std::int64_t value) {
    proto::AttributeProto& attribute = *node.add_attribute();
    attribute.set_name(name);
    attribute.set_type(proto::AttributeProto::INT);
    attribute.set_i(value);
  }
  static void set_float(proto::NodeProto& node, const std::string& name, float value) {
    proto::AttributeProto& attribute = *node.add_attribute();
    attribute.set_name(name);
    attribute.set_type(proto::AttributeProto::FLOAT);
    attribute.set_f(value);
  }

  // A float initializer named `name` of shape `dims` holding `values` (row-major).
  std::string constant(const std::string& name, const std::vector<std::int64_t>& dims, std::span<const float> values) {
    proto::TensorProto& tensor = *graph_.add_initializer();
    tensor.set_name(name);
    tensor.set_data_type(proto::TensorProto::FLOAT);
    for (const std::int64_t dim : dims) tensor.add_dims(dim);
    tensor.set_raw_data(values.data(), values.size_bytes());
    return name;
  }

  // The saved values of "<layer>.<tensor>" (trainable or state), as pstrain lays them out.
  std::span<const float> saved(const std::string& name) const {
    for (const nn::ParameterInfo& info : model_.plan.parameters) {
      if (info.name == name) return std::span<const float>(model_.parameters).subspan(info.offset, info.size);
    }
    for (const nn::ParameterInfo& info : model_.plan.state) {
      if (info.name == name) return std::span<const float>(model_.state).subspan(info.offset, info.size);
    }
    PSTRAIN_ASSERT(false, "no saved tensor ", name);
    return {};
  }
  bool has_saved(const std::string& name) const {
    for (const nn::ParameterInfo& info : model_.plan.parameters) {
      if (info.name == name) return true;
    }
    return false;
  }

 private:
  proto::GraphProto& graph_;
  const inference::SavedModel& model_;
};

[[noreturn]] void cannot_export(const nn::PlannedNode& node, const std::string& why) {
  throw Error(ExitCode::kUsage,
              cat("layer ", node.spec.name, " (", node.spec.type, ") cannot be exported to ONNX: ", why));
}

std::string conv2d(GraphBuilder& graph, const nn::PlannedNode& node, const Value& input, const std::string& out) {
  const std::string& name = node.spec.name;
  const std::size_t kernel = attribute(node.spec, "kernel", 3);
  const auto stride = static_cast<std::int64_t>(attribute(node.spec, "stride", 1));
  const auto padding = static_cast<std::int64_t>(attribute(node.spec, "padding", (kernel - 1) / 2));
  const std::size_t filters = node.plan.output[2];
  const std::size_t channels = input.shape[2];
  // {filters, ky, kx, channels} -> {filters, channels, ky, kx}
  const std::span<const float> hwc = graph.saved(name + ".weight");
  std::vector<float> oihw(hwc.size());
  for (std::size_t f = 0; f < filters; ++f) {
    for (std::size_t y = 0; y < kernel; ++y) {
      for (std::size_t x = 0; x < kernel; ++x) {
        for (std::size_t c = 0; c < channels; ++c) {
          oihw[((f * channels + c) * kernel + y) * kernel + x] = hwc[((f * kernel + y) * kernel + x) * channels + c];
        }
      }
    }
  }
  const auto k = static_cast<std::int64_t>(kernel);
  std::vector<std::string> inputs{input.name, graph.constant(name + ".weight",
                                                             {static_cast<std::int64_t>(filters),
                                                              static_cast<std::int64_t>(channels), k, k},
                                                             oihw)};
  if (graph.has_saved(name + ".bias")) {
    inputs.push_back(graph.constant(name + ".bias", {static_cast<std::int64_t>(filters)}, graph.saved(name + ".bias")));
  }
  proto::NodeProto& conv = graph.node("Conv", inputs, out);
  GraphBuilder::set_ints(conv, "kernel_shape", {k, k});
  GraphBuilder::set_ints(conv, "strides", {stride, stride});
  GraphBuilder::set_ints(conv, "pads", {padding, padding, padding, padding});
  return out;
}

std::string dense(GraphBuilder& graph, const nn::PlannedNode& node, const Value& input, const std::string& out) {
  const std::string& name = node.spec.name;
  const auto units = static_cast<std::int64_t>(node.plan.output[0]);
  std::vector<std::string> inputs{input.name,
                                  graph.constant(name + ".weight", {units, static_cast<std::int64_t>(input.shape[0])},
                                                 graph.saved(name + ".weight"))};
  if (graph.has_saved(name + ".bias"))
    inputs.push_back(graph.constant(name + ".bias", {units}, graph.saved(name + ".bias")));
  GraphBuilder::set_int(graph.node("Gemm", inputs, out), "transB", 1);
  return out;
}

std::string pool(GraphBuilder& graph, const nn::PlannedNode& node, const Value& input, const std::string& out) {
  const auto window = static_cast<std::int64_t>(attribute(node.spec, "window", 2));
  const auto stride = static_cast<std::int64_t>(attribute(node.spec, "stride", static_cast<std::size_t>(window)));
  proto::NodeProto& added = graph.node(node.spec.type == "maxpool" ? "MaxPool" : "AveragePool", {input.name}, out);
  GraphBuilder::set_ints(added, "kernel_shape", {window, window});
  GraphBuilder::set_ints(added, "strides", {stride, stride});
  return out;
}

std::string batchnorm(GraphBuilder& graph, const nn::PlannedNode& node, const Value& input, const std::string& out) {
  // ONNX normalises axis 1: the channels of NCHW images and of [batch, features], the two inputs pstrain's
  // batch norm takes.
  const std::string& name = node.spec.name;
  const auto channels = static_cast<std::int64_t>(input.shape.back());
  std::vector<std::string> inputs{input.name};
  for (const char* tensor : {"gamma", "beta", "running_mean", "running_var"}) {
    const std::string full = cat(name, ".", tensor);
    inputs.push_back(graph.constant(full, {channels}, graph.saved(full)));
  }
  GraphBuilder::set_float(graph.node("BatchNormalization", inputs, out), "epsilon",
                          number_attribute(node.spec, "epsilon", 1e-5f));
  return out;
}

std::string flatten(GraphBuilder& graph, const Value& input, const std::string& out) {
  std::string source = input.name;
  if (input.shape.size() == 3) {  // back to pstrain's (h, w, c) order, which the dense weights after it expect
    source = out + "/nhwc";
    GraphBuilder::set_ints(graph.node("Transpose", {input.name}, source), "perm", {0, 2, 3, 1});
  }
  GraphBuilder::set_int(graph.node("Flatten", {source}, out), "axis", 1);
  return out;
}

std::string embedding(GraphBuilder& graph, const nn::PlannedNode& node, const Value& input, const std::string& out) {
  const std::string& name = node.spec.name;
  const nn::Shape& table = node.plan.parameters[0].shape;
  std::string ids = input.name;
  if (!input.ids) {  // ids computed as floats by another layer
    ids = out + "/ids";
    GraphBuilder::set_int(graph.node("Cast", {input.name}, ids), "to", proto::TensorProto::INT64);
  }
  const std::string weight =
      graph.constant(name + ".weight", {static_cast<std::int64_t>(table[0]), static_cast<std::int64_t>(table[1])},
                     graph.saved(name + ".weight"));
  GraphBuilder::set_int(graph.node("Gather", {weight, ids}, out), "axis", 0);
  return out;
}

std::string unary(GraphBuilder& graph, const std::string& op, const Value& input, const std::string& out) {
  graph.node(op, {input.name}, out);
  return out;
}

// The ONNX form of one planned node, reading `inputs`; returns the name of its output.
std::string add_layer(GraphBuilder& graph, const nn::PlannedNode& node, const std::vector<Value>& inputs) {
  const std::string out = "pstrain/" + node.spec.name;
  const std::string& type = node.spec.type;
  const Value& input = inputs[0];
  if (type == "dense") return dense(graph, node, input, out);
  if (type == "conv2d") return conv2d(graph, node, input, out);
  if (type == "maxpool" || type == "avgpool") return pool(graph, node, input, out);
  if (type == "batchnorm") return batchnorm(graph, node, input, out);
  if (type == "flatten") return flatten(graph, input, out);
  if (type == "embedding") return embedding(graph, node, input, out);
  if (type == "dropout") return unary(graph, "Identity", input, out);
  if (type == "relu") return unary(graph, "Relu", input, out);
  if (type == "tanh") return unary(graph, "Tanh", input, out);
  if (type == "sigmoid") return unary(graph, "Sigmoid", input, out);
  if (type == "global_avgpool") {
    graph.node("GlobalAveragePool", {input.name}, out + "/pooled");
    GraphBuilder::set_int(graph.node("Flatten", {out + "/pooled"}, out), "axis", 1);
    return out;
  }
  if (type == "scale") {
    const float factor = number_attribute(node.spec, "factor", 1.0f);
    graph.node("Mul", {input.name, graph.constant(out + "/factor", {}, std::span<const float>(&factor, 1))}, out);
    return out;
  }
  if (type == "add") {
    std::string sum = inputs[0].name;
    for (std::size_t i = 1; i < inputs.size(); ++i) {
      const std::string next = i + 1 == inputs.size() ? out : cat(out, "/sum", i);
      graph.node("Add", {sum, inputs[i].name}, next);
      sum = next;
    }
    return out;
  }
  if (type == "concat") {
    std::vector<std::string> names;
    for (const Value& value : inputs) names.push_back(value.name);
    // pstrain's last axis: the channels (axis 1 of NCHW), the features of [batch, n], the dim of [batch, tokens, dim]
    const std::int64_t axis = input.shape.size() == 3 ? 1 : static_cast<std::int64_t>(input.shape.size());
    GraphBuilder::set_int(graph.node("Concat", names, out), "axis", axis);
    return out;
  }
  cannot_export(node, "no ONNX form for this layer type");
}

void declare(proto::ValueInfoProto& value, const std::string& name, int element_type,
             const std::vector<std::int64_t>& sample_dims) {
  value.set_name(name);
  proto::TypeProto::Tensor& tensor = *value.mutable_type()->mutable_tensor_type();
  tensor.set_elem_type(element_type);
  tensor.mutable_shape()->add_dim()->set_dim_param("batch");
  for (const std::int64_t dim : sample_dims) tensor.mutable_shape()->add_dim()->set_dim_value(dim);
}

}  // namespace

bool built_with_onnx() {
  return true;
}

std::string onnx_model_bytes(const inference::SavedModel& saved) {
  const nn::ModelPlan& plan = saved.plan;
  proto::ModelProto model;
  model.set_ir_version(proto::IR_VERSION);
  model.set_producer_name("pstrain");
  model.set_producer_version(PSTRAIN_VERSION);
  model.set_doc_string(cat("pstrain pass folder ", saved.pass_dir.string(), ", model ", saved.info.source, "; input ",
                           plan.input.size() == 3 ? "NCHW images"
                           : saved.info.tokens    ? "int64 ids"
                                                  : "vectors"));
  proto::OperatorSetIdProto& opset = *model.add_opset_import();
  opset.set_domain("");
  opset.set_version(kOnnxOpset);
  proto::GraphProto& graph = *model.mutable_graph();
  graph.set_name("pstrain");

  Value data{"input", plan.input, saved.info.tokens};
  std::vector<std::int64_t> input_dims;
  if (plan.input.size() == 3) {
    input_dims = {static_cast<std::int64_t>(plan.input[2]), static_cast<std::int64_t>(plan.input[0]),
                  static_cast<std::int64_t>(plan.input[1])};
  } else {
    for (const std::size_t extent : plan.input) input_dims.push_back(static_cast<std::int64_t>(extent));
  }
  declare(*graph.add_input(), "input", data.ids ? proto::TensorProto::INT64 : proto::TensorProto::FLOAT, input_dims);

  GraphBuilder builder(graph, saved);
  std::vector<Value> outputs;
  for (const nn::PlannedNode& node : plan.nodes) {
    std::vector<Value> inputs;
    for (const int index : node.inputs) {
      inputs.push_back(index == nn::ModelPlan::kDataInput ? data : outputs[static_cast<std::size_t>(index)]);
    }
    outputs.push_back({add_layer(builder, node, inputs), node.plan.output, false});
  }
  const auto classes = static_cast<std::int64_t>(plan.classes);
  builder.node("Identity", {outputs.back().name}, "logits");
  GraphBuilder::set_int(builder.node("Softmax", {outputs.back().name}, "probabilities"), "axis", 1);
  declare(*graph.add_output(), "logits", proto::TensorProto::FLOAT, {classes});
  declare(*graph.add_output(), "probabilities", proto::TensorProto::FLOAT, {classes});
  try {
    proto::checker::check_model(model);
  } catch (const std::exception& failure) {
    PSTRAIN_ASSERT(false, "the exported ONNX model fails ONNX's checker: ", failure.what());
  }
  std::string bytes;
  PSTRAIN_ASSERT(model.SerializeToString(&bytes), "protobuf could not serialize the ONNX model");
  return bytes;
}

void write_onnx_model(const inference::SavedModel& model, const std::filesystem::path& target) {
  std::error_code error;
  if (std::filesystem::exists(std::filesystem::symlink_status(target, error))) {
    throw Error(ExitCode::kOutput, cat("--onnx ", target.string(), " already exists; pstrain never replaces a file"));
  }
  const std::string bytes = onnx_model_bytes(model);
  write_file_atomically(target, bytes);
}

}  // namespace pstrain::exporting
