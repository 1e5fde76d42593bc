#include "export/onnx_export.h"

#include <fcntl.h>
#include <onnx/checker.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "core/files.h"
#include "export/onnx_graph.h"

namespace pstrain::exporting {

namespace {

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
                                                             graph.keep(std::move(oihw)))};
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

// The keys of `node`'s table when it is keyed by the raw id, else null.
const inference::KeyedTable* keyed_table(const inference::SavedModel& saved, const nn::PlannedNode& node) {
  for (const inference::KeyedTable& table : saved.keyed) {
    if (&saved.plan.nodes.at(table.node) == &node) return &table;
  }
  return nullptr;
}

std::string unary(GraphBuilder& graph, const std::string& op, const Value& input, const std::string& out) {
  graph.node(op, {input.name}, out);
  return out;
}

// The ONNX form of one planned node, reading `inputs`; returns the name of its output.
std::string add_layer(GraphBuilder& graph, const nn::PlannedNode& node, const std::vector<Value>& inputs) {
  const std::string out = "pstrain/" + node.spec.name;
  const std::string& type = node.spec.type;
  const Value input = inputs.empty() ? Value{} : inputs[0];  // embedding_bag reads no layer
  if (type == "dense") return dense(graph, node, input, out);
  if (type == "conv2d") return conv2d(graph, node, input, out);
  if (type == "maxpool" || type == "avgpool") return pool(graph, node, input, out);
  if (type == "batchnorm") return batchnorm(graph, node, input, out);
  if (type == "flatten") return flatten(graph, input, out);
  if (type == "embedding") return embedding(graph, node, input, out);
  if (type == "embedding_bag") {
    const inference::KeyedTable* keyed = keyed_table(graph.saved_model(), node);
    return keyed != nullptr ? keyed_embedding_bag(graph, node, keyed->keys, out) : embedding_bag(graph, node, out);
  }
  if (type == "dot_interaction") return dot_interaction(graph, inputs, out);
  if (type == "fm") return fm(graph, inputs, out);
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
    graph.node("Mul", {input.name, graph.constant(out + "/factor", {}, graph.keep({factor}))}, out);
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

// The data's input, "input", when some layer reads it (a click model's dense features, images, vectors, ids).
void declare_data_input(proto::GraphProto& graph, const inference::SavedModel& saved) {
  const nn::ModelPlan& plan = saved.plan;
  std::vector<std::int64_t> input_dims;
  if (plan.input.size() == 3) {
    input_dims = {static_cast<std::int64_t>(plan.input[2]), static_cast<std::int64_t>(plan.input[0]),
                  static_cast<std::int64_t>(plan.input[1])};
  } else {
    for (const std::size_t extent : plan.input) input_dims.push_back(static_cast<std::int64_t>(extent));
  }
  declare(*graph.add_input(), "input", saved.info.tokens ? proto::TensorProto::INT64 : proto::TensorProto::FLOAT,
          input_dims);
}

bool reads_data(const nn::ModelPlan& plan) {
  for (const nn::PlannedNode& node : plan.nodes) {
    for (const int index : node.inputs) {
      if (index == nn::ModelPlan::kDataInput) return true;
    }
  }
  return false;
}

// The graph's outputs: "logits" as the last layer gives them and "probabilities": their softmax, or for a click
// model (loss=bce, one logit) the sigmoid of its logit, the click probability `pstrain predict` writes.
void add_outputs(GraphBuilder& builder, proto::GraphProto& graph, const nn::ModelPlan& plan, const std::string& last) {
  const bool click = plan.loss == nn::LossKind::kBinaryCrossEntropy;
  const auto width = static_cast<std::int64_t>(nn::element_count(plan.nodes.back().plan.output));
  builder.node("Identity", {last}, "logits");
  if (click) {
    builder.node("Sigmoid", {last}, "probabilities");
  } else {
    GraphBuilder::set_int(builder.node("Softmax", {last}, "probabilities"), "axis", 1);
  }
  declare(*graph.add_output(), "logits", proto::TensorProto::FLOAT, {width});
  declare(*graph.add_output(), "probabilities", proto::TensorProto::FLOAT, {width});
}

std::string input_kind(const inference::SavedModel& saved) {
  const std::string data = saved.plan.input.size() == 3 ? "NCHW images" : saved.info.tokens ? "int64 ids" : "vectors";
  if (saved.plan.categorical_fields == 0) return data;
  return data + (saved.keyed.empty() ? " and per embedding_bag int64 hashed rows"
                                     : " and per embedding_bag int64 raw ids (keyed tables) or hashed rows");
}

// A keyed table's keys go into its LabelEncoder's attributes, which protobuf holds inline (no external data for
// attributes): 16 bytes per held id (key and row), which must stay under protobuf's 2 GiB with the graph.
void check_keys_fit(const inference::SavedModel& saved) {
  std::uint64_t keys = 0;
  for (const inference::KeyedTable& table : saved.keyed) keys += table.keys.size();
  if (keys * 2 * sizeof(std::int64_t) > kExternalDataAbove) {
    throw Error(ExitCode::kUsage, cat(saved.pass_dir.string(), " holds ", keys, " keyed rows: their keys (",
                                      keys * 2 * sizeof(std::int64_t), " bytes of LabelEncoder attributes) cannot ",
                                      "be held by an ONNX file (protobuf's 2 GiB)"));
  }
}

// The whole model, its float weights inline while they total at most `inline_limit` bytes, the largest of them
// in the side file `location` past it.
void build_model(BuiltModel& built, const inference::SavedModel& saved, std::uint64_t inline_limit,
                 const std::string& location) {
  const nn::ModelPlan& plan = saved.plan;
  proto::ModelProto& model = built.proto;
  model.set_ir_version(proto::IR_VERSION);
  model.set_producer_name("pstrain");
  model.set_producer_version(PSTRAIN_VERSION);
  model.set_doc_string(cat("pstrain pass folder ", saved.pass_dir.string(), ", model ", saved.info.source, "; input ",
                           input_kind(saved)));
  proto::OperatorSetIdProto& opset = *model.add_opset_import();
  opset.set_domain("");
  opset.set_version(kOnnxOpset);
  if (!saved.keyed.empty()) {  // LabelEncoder maps a keyed table's raw ids to its rows
    check_keys_fit(saved);
    proto::OperatorSetIdProto& ml = *model.add_opset_import();
    ml.set_domain(kOnnxMlDomain);
    ml.set_version(kOnnxMlOpset);
  }
  proto::GraphProto& graph = *model.mutable_graph();
  graph.set_name("pstrain");

  const Value data{"input", plan.input, saved.info.tokens};
  if (reads_data(plan)) declare_data_input(graph, saved);
  GraphBuilder builder(built, saved);
  std::vector<Value> outputs;
  for (const nn::PlannedNode& node : plan.nodes) {
    if (node.spec.type == "embedding_bag") {
      const inference::KeyedTable* keyed = keyed_table(saved, node);
      if (keyed != nullptr)
        declare_bag_ids_input(model, node, keyed->keys.size());
      else
        declare_bag_rows_input(model, node);
    }
    std::vector<Value> inputs;
    for (const int index : node.inputs) {
      inputs.push_back(index == nn::ModelPlan::kDataInput ? data : outputs[static_cast<std::size_t>(index)]);
    }
    outputs.push_back({add_layer(builder, node, inputs), node.plan.output, false});
  }
  add_outputs(builder, graph, plan, outputs.back().name);
  builder.place_weights(inline_limit, location);
}

void check_in_memory(const proto::ModelProto& model) {
  try {
    proto::checker::check_model(model);
  } catch (const std::exception& failure) {
    PSTRAIN_ASSERT(false, "the exported ONNX model fails ONNX's checker: ", failure.what());
  }
}

std::string serialized(const proto::ModelProto& model) {
  std::string bytes;
  PSTRAIN_ASSERT(model.SerializeToString(&bytes), "protobuf could not serialize the ONNX model");
  return bytes;
}

void write_floats(int fd, std::span<const float> values, const std::filesystem::path& path) {
  const char* data = reinterpret_cast<const char*>(values.data());
  std::size_t written = 0;
  while (written < values.size_bytes()) {
    const ssize_t n = ::write(fd, data + written, values.size_bytes() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(ExitCode::kOutput, cat("cannot write ", path.string(), ": ", std::strerror(errno)));
    written += static_cast<std::size_t>(n);
  }
}

// The side file's bytes straight from the weights (no copy of a table in memory), zeros between tensors up to
// each one's offset, under a temporary name renamed into place.
void write_external_data(const BuiltModel& built, const std::filesystem::path& path) {
  const std::filesystem::path temporary = path.string() + ".tmp-" + std::to_string(::getpid());
  try {
    FileDescriptor file(temporary, O_WRONLY | O_CREAT | O_TRUNC);
    std::uint64_t at = 0;
    for (const ExternalTensor& tensor : built.external) {
      const std::vector<float> gap((tensor.offset - at) / sizeof(float), 0.0f);  // offsets are multiples of 4096
      write_floats(file.get(), gap, temporary);
      at = tensor.offset;
      for (const std::span<const float> piece : tensor.pieces) {
        write_floats(file.get(), piece, temporary);
        at += piece.size_bytes();
      }
    }
    file.sync();
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw;
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw Error(ExitCode::kOutput,
                cat("cannot rename ", temporary.string(), " to ", path.string(), ": ", error.message()));
  }
}

// The .onnx of a model with external data: written under a temporary name in the side file's folder, checked
// there by ONNX's checker (which resolves "location" against the model's folder, so it sees the side file), then
// renamed into place. Any failure removes both files.
void write_with_external_data(const BuiltModel& built, const std::filesystem::path& target,
                              const std::filesystem::path& side) {
  const std::filesystem::path temporary = target.string() + ".tmp-" + std::to_string(::getpid());
  const auto remove_both = [&] {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    std::filesystem::remove(side, ignored);
  };
  write_external_data(built, side);
  try {
    {
      FileDescriptor file(temporary, O_WRONLY | O_CREAT | O_TRUNC);
      file.write_all(serialized(built.proto));
      file.sync();
    }
    try {
      proto::checker::check_model(temporary.string());
    } catch (const std::exception& failure) {
      PSTRAIN_ASSERT(false, "the exported ONNX model fails ONNX's checker: ", failure.what());
    }
    std::error_code error;
    std::filesystem::rename(temporary, target, error);
    if (error) {
      throw Error(ExitCode::kOutput,
                  cat("cannot rename ", temporary.string(), " to ", target.string(), ": ", error.message()));
    }
  } catch (...) {
    remove_both();
    throw;
  }
  fsync_path(target.parent_path().empty() ? "." : target.parent_path());
}

void refuse_existing(const std::filesystem::path& path, const std::string& what) {
  std::error_code error;
  if (std::filesystem::exists(std::filesystem::symlink_status(path, error))) {
    throw Error(ExitCode::kOutput, cat(what, path.string(), " already exists; pstrain never replaces a file"));
  }
}

}  // namespace

bool built_with_onnx() {
  return true;
}

std::string onnx_model_bytes(const inference::SavedModel& saved) {
  BuiltModel built;
  build_model(built, saved, std::numeric_limits<std::uint64_t>::max(), "");
  check_in_memory(built.proto);
  return serialized(built.proto);
}

std::filesystem::path external_data_path(const std::filesystem::path& target) {
  return target.string() + ".data";
}

ExportSummary write_onnx_model(const inference::SavedModel& model, const std::filesystem::path& target,
                               const ExportOptions& options) {
  refuse_existing(target, "--onnx ");
  const std::filesystem::path side = external_data_path(target);
  BuiltModel built;
  build_model(built, model, options.external_data_above, side.filename().string());
  if (built.external.empty()) {
    check_in_memory(built.proto);
    write_file_atomically(target, serialized(built.proto));
    return {};
  }
  refuse_existing(side, "the external data of --onnx, ");
  write_with_external_data(built, target, side);
  return {side, built.external.size(), built.external_bytes};
}

}  // namespace pstrain::exporting
