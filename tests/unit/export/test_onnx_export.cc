// lib/export: the ONNX graph of a saved model. Convolution weights arrive in OIHW order element for element,
// images enter as NCHW and go back to pstrain's (h, w, c) order before a flatten, a layer without an ONNX form
// is named, and the file is never written over an existing one nor left half-written. An embedding_bag reads its
// own int64 rows input, described in the metadata, from its table plus a zero pad row; weights past the limit go
// to the side file largest first, and a side file that exists is never replaced.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <numeric>

#include "core/error.h"
#include "export/onnx_export.h"
#include "nn/model_spec.h"

namespace pstrain::exporting {
namespace {

namespace fs = std::filesystem;
namespace proto = ONNX_NAMESPACE;

// Parameters numbered 0, 1, 2, ... so that every element says where pstrain kept it.
inference::SavedModel numbered_model(const std::string& text, const nn::Shape& input, std::size_t classes) {
  inference::SavedModel model;
  model.pass_dir = "pass-00000";
  model.info.input = input;
  model.info.classes = classes;
  model.plan = nn::plan_model(nn::parse_model_text(text, "test"), input, classes);
  model.parameters.resize(model.plan.parameter_count);
  for (std::size_t i = 0; i < model.parameters.size(); ++i) model.parameters[i] = static_cast<float>(i);
  model.state.assign(model.plan.state_count, 1.0f);
  return model;
}

proto::ModelProto parsed(const inference::SavedModel& model) {
  proto::ModelProto parsed;
  EXPECT_TRUE(parsed.ParseFromString(onnx_model_bytes(model)));
  return parsed;
}

const proto::TensorProto& initializer(const proto::ModelProto& model, const std::string& name) {
  for (const proto::TensorProto& tensor : model.graph().initializer()) {
    if (tensor.name() == name) return tensor;
  }
  throw std::runtime_error("no initializer " + name);
}

TEST(OnnxExport, ConvolutionWeightsAreOihwAndImagesAreNchw) {
  const inference::SavedModel model =
      numbered_model("c conv2d filters=2 kernel=3\nf flatten\no dense units=3\n", {4, 4, 5}, 3);
  const proto::ModelProto onnx = parsed(model);
  EXPECT_EQ(onnx.opset_import(0).version(), kOnnxOpset);
  const proto::TensorProto& weight = initializer(onnx, "c.weight");
  ASSERT_EQ(std::vector<std::int64_t>(weight.dims().begin(), weight.dims().end()),
            (std::vector<std::int64_t>{2, 5, 3, 3}));
  std::vector<float> oihw(weight.raw_data().size() / sizeof(float));
  std::memcpy(oihw.data(), weight.raw_data().data(), weight.raw_data().size());
  for (std::size_t f = 0; f < 2; ++f) {
    for (std::size_t c = 0; c < 5; ++c) {
      for (std::size_t y = 0; y < 3; ++y) {
        for (std::size_t x = 0; x < 3; ++x) {
          // pstrain's {filters, ky, kx, channels}: its element number is its value.
          ASSERT_EQ(oihw[((f * 5 + c) * 3 + y) * 3 + x], static_cast<float>(((f * 3 + y) * 3 + x) * 5 + c));
        }
      }
    }
  }
  const auto& input = onnx.graph().input(0).type().tensor_type().shape();
  ASSERT_EQ(input.dim_size(), 4);
  EXPECT_EQ(input.dim(0).dim_param(), "batch");
  EXPECT_EQ(input.dim(1).dim_value(), 5);
  EXPECT_EQ(input.dim(2).dim_value(), 4);
  std::vector<std::string> ops;
  for (const proto::NodeProto& node : onnx.graph().node()) ops.push_back(node.op_type());
  EXPECT_EQ(ops, (std::vector<std::string>{"Conv", "Transpose", "Flatten", "Gemm", "Identity", "Softmax"}));
  EXPECT_EQ(onnx.graph().output(0).name(), "logits");
  EXPECT_EQ(onnx.graph().output(1).name(), "probabilities");
}

TEST(OnnxExport, LanguageModelTakesInt64Ids) {
  inference::SavedModel model = numbered_model("e embedding vocab=7 dim=2\nf flatten\no dense units=7\n", {3}, 7);
  model.info.tokens = true;
  model.info.vocab_size = 7;
  const proto::ModelProto onnx = parsed(model);
  EXPECT_EQ(onnx.graph().input(0).type().tensor_type().elem_type(), proto::TensorProto::INT64);
  EXPECT_EQ(onnx.graph().node(0).op_type(), "Gather");
}

TEST(OnnxExport, NamesALayerItCannotExpress) {
  // Every layer type registered today has an ONNX form: a type the exporter does not know stands for a future one.
  inference::SavedModel model = numbered_model("h dense units=4\no dense units=2\n", {3}, 2);
  model.plan.nodes[0].spec.type = "mystery";
  try {
    onnx_model_bytes(model);
    FAIL() << "an unknown layer type exported";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kUsage);
    EXPECT_NE(std::string(error.what()).find("layer h (mystery) cannot be exported to ONNX"), std::string::npos)
        << error.what();
  }
}

TEST(OnnxExport, NeverReplacesAFileNorLeavesAPartialOne) {
  const fs::path folder = fs::temp_directory_path() / ("pstrain-onnx-" + std::to_string(::getpid()));
  fs::remove_all(folder);
  fs::create_directories(folder / "taken.onnx");  // a folder where the file should go
  const inference::SavedModel model = numbered_model("o dense units=2\n", {3}, 2);
  std::ofstream(folder / "existing.onnx") << "keep";
  for (const char* name : {"existing.onnx", "taken.onnx", "missing/model.onnx"}) {
    try {
      write_onnx_model(model, folder / name);
      ADD_FAILURE() << name << " written";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ExitCode::kOutput) << error.what();
    }
  }
  // existing.onnx and taken.onnx only: no temporary file left behind.
  EXPECT_EQ(std::distance(fs::directory_iterator(folder), fs::directory_iterator()), 2) << folder;
  std::ifstream kept(folder / "existing.onnx");
  std::string text;
  kept >> text;
  EXPECT_EQ(text, "keep");
  write_onnx_model(model, folder / "new.onnx");
  proto::ModelProto back;
  std::ifstream file(folder / "new.onnx", std::ios::binary);
  EXPECT_TRUE(back.ParseFromIstream(&file));
  fs::remove_all(folder);
}

std::vector<float> floats_of(const std::string& bytes) {
  std::vector<float> values(bytes.size() / sizeof(float));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(float));
  return values;
}

std::string external_entry(const proto::TensorProto& tensor, const std::string& key) {
  for (const proto::StringStringEntryProto& entry : tensor.external_data()) {
    if (entry.key() == key) return entry.value();
  }
  return "(none)";
}

TEST(OnnxExport, EmbeddingBagReadsHashedRowsFromItsTableAndAZeroPadRow) {
  const inference::SavedModel model = numbered_model(
      "e embedding_bag fields=0,1 rows=5 dim=2 seed=9 pooling=mean\nf flatten\no dense units=1 loss=bce\n", {3}, 2);
  const proto::ModelProto onnx = parsed(model);
  const proto::TensorProto& table = initializer(onnx, "e.weight");
  ASSERT_EQ(std::vector<std::int64_t>(table.dims().begin(), table.dims().end()), (std::vector<std::int64_t>{6, 2}));
  std::vector<float> expected(10);
  std::iota(expected.begin(), expected.end(), 0.0f);  // the saved table, then row 5 of zeros
  expected.insert(expected.end(), {0.0f, 0.0f});
  EXPECT_EQ(floats_of(table.raw_data()), expected);
  // The data input is left out: no layer reads it.
  ASSERT_EQ(onnx.graph().input_size(), 1);
  const proto::ValueInfoProto& rows = onnx.graph().input(0);
  EXPECT_EQ(rows.name(), "e.rows");
  EXPECT_EQ(rows.type().tensor_type().elem_type(), proto::TensorProto::INT64);
  const auto& shape = rows.type().tensor_type().shape();
  ASSERT_EQ(shape.dim_size(), 3);
  EXPECT_EQ(shape.dim(0).dim_param(), "batch");
  EXPECT_EQ(shape.dim(1).dim_value(), 2);
  EXPECT_EQ(shape.dim(2).dim_param(), "e.bag");
  ASSERT_EQ(onnx.metadata_props_size(), 1);
  EXPECT_EQ(onnx.metadata_props(0).key(), "pstrain.embedding_bag.e");
  EXPECT_EQ(onnx.metadata_props(0).value(), "input=e.rows fields=0,1 seed=9 rows=5 pad=5 pooling=mean");
  std::vector<std::string> ops;
  for (const proto::NodeProto& node : onnx.graph().node()) ops.push_back(node.op_type());
  EXPECT_EQ(ops, (std::vector<std::string>{"Gather", "ReduceSum", "Less", "Cast", "ReduceSum", "Max", "Div", "Flatten",
                                           "Gemm", "Identity", "Sigmoid"}));
  EXPECT_EQ(onnx.graph().output(1).type().tensor_type().shape().dim(1).dim_value(), 1);
}

TEST(OnnxExport, WeightsPastTheLimitGoLargestFirstToTheSideFile) {
  const fs::path folder = fs::temp_directory_path() / ("pstrain-onnx-external-" + std::to_string(::getpid()));
  fs::remove_all(folder);
  fs::create_directories(folder);
  // a.weight {101, 4} with its pad row: 1616 bytes; the dense weights 84 bytes in all (b 48 + 16, o 16 + 4).
  const inference::SavedModel model = numbered_model(
      "a embedding_bag field=0 rows=100 dim=4\nb dense units=4 inputs=input\nc add inputs=a,b\n"
      "o dense units=1 loss=bce\n",
      {3}, 2);
  const ExportSummary summary = write_onnx_model(model, folder / "m.onnx", {.external_data_above = 100});
  EXPECT_EQ(summary.external_data, folder / "m.onnx.data");
  EXPECT_EQ(summary.tensors, 1u);
  EXPECT_EQ(summary.bytes, 1616u);
  proto::ModelProto back;
  std::ifstream file(folder / "m.onnx", std::ios::binary);
  ASSERT_TRUE(back.ParseFromIstream(&file));
  const proto::TensorProto& table = initializer(back, "a.weight");
  EXPECT_EQ(table.data_location(), proto::TensorProto::EXTERNAL);
  EXPECT_FALSE(table.has_raw_data());
  EXPECT_EQ(external_entry(table, "location"), "m.onnx.data");
  EXPECT_EQ(external_entry(table, "offset"), "0");
  EXPECT_EQ(external_entry(table, "length"), "1616");
  EXPECT_NE(initializer(back, "b.weight").data_location(), proto::TensorProto::EXTERNAL);
  std::ifstream side(folder / "m.onnx.data", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(side)), std::istreambuf_iterator<char>());
  std::vector<float> expected(400);
  std::iota(expected.begin(), expected.end(), 0.0f);
  expected.insert(expected.end(), 4, 0.0f);
  EXPECT_EQ(floats_of(bytes), expected);

  // Every weight out: each at a multiple of 4096, the largest first.
  const ExportSummary all = write_onnx_model(model, folder / "all.onnx", {.external_data_above = 0});
  EXPECT_EQ(all.tensors, 5u);
  std::ifstream all_file(folder / "all.onnx", std::ios::binary);
  ASSERT_TRUE(back.ParseFromIstream(&all_file));
  EXPECT_EQ(external_entry(initializer(back, "a.weight"), "offset"), "0");
  EXPECT_EQ(external_entry(initializer(back, "b.weight"), "offset"), "4096");
  EXPECT_EQ(fs::file_size(folder / "all.onnx.data"), 4u * 4096 + 4);  // o.bias, the smallest, last

  // A side file that exists is never replaced, and the .onnx is then not written either.
  std::ofstream(folder / "taken.onnx.data") << "keep";
  try {
    write_onnx_model(model, folder / "taken.onnx", {.external_data_above = 100});
    ADD_FAILURE() << "taken.onnx written over an existing side file";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kOutput) << error.what();
  }
  EXPECT_FALSE(fs::exists(folder / "taken.onnx"));
  EXPECT_EQ(fs::file_size(folder / "taken.onnx.data"), 4u);
  fs::remove_all(folder);
}

}  // namespace
}  // namespace pstrain::exporting
