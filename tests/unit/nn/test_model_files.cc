// Model descriptions: the parser and the plan against the data, every error naming file:line and the problem,
// the parameter layout computed without a backend, and the presets.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "core/error.h"
#include "nn/model_plan.h"
#include "nn/presets.h"
#include "read_text.h"

namespace pstrain::nn {
namespace {

ModelPlan plan_text(const std::string& text, const Shape& input = {4, 4, 2}, std::size_t classes = 3) {
  return plan_model(parse_model_text(text, "m.model"), input, classes);
}

// The description fails with kUsage and a message holding every one of `parts`.
void expect_usage_error(const std::string& text, const std::vector<std::string>& parts,
                        const Shape& input = {4, 4, 2}) {
  try {
    plan_text(text, input);
    FAIL() << "expected an error for:\n" << text;
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kUsage) << error.what();
    for (const std::string& part : parts) {
      EXPECT_NE(std::string(error.what()).find(part), std::string::npos) << "'" << part << "' not in: " << error.what();
    }
  }
}

TEST(ModelFileTest, CommentsBlankLinesAndDefaultInputsMakeASequence) {
  const ModelPlan plan = plan_text("# a model\n\nc1 conv2d filters=2   # comment\nf flatten\n  out dense units=3\n");
  ASSERT_EQ(plan.nodes.size(), 3u);
  EXPECT_EQ(plan.nodes[0].inputs, std::vector<int>{ModelPlan::kDataInput});
  EXPECT_EQ(plan.nodes[1].inputs, std::vector<int>{0});
  EXPECT_EQ(plan.nodes[2].spec.line, 5);
  EXPECT_EQ(plan.nodes[0].plan.output, (Shape{4, 4, 2}));
  EXPECT_EQ(plan.nodes[1].plan.output, (Shape{32}));
}

TEST(ModelFileTest, LayoutIsNamedPackedAndComputedWithoutABackend) {
  const ModelPlan plan = plan_text("c1 conv2d filters=2 bias=false\nb batchnorm\nf flatten\nout dense units=3\n");
  ASSERT_EQ(plan.parameters.size(), 5u);
  const std::vector<std::string> names{"c1.weight", "b.gamma", "b.beta", "out.weight", "out.bias"};
  std::size_t offset = 0;
  for (std::size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(plan.parameters[i].name, names[i]);
    EXPECT_EQ(plan.parameters[i].offset, offset);
    offset += plan.parameters[i].size;
  }
  EXPECT_EQ(plan.parameters[0].shape, (Shape{2, 3, 3, 2}));
  EXPECT_EQ(plan.parameter_count, offset);
  ASSERT_EQ(plan.state.size(), 2u);
  EXPECT_EQ(plan.state[0].name, "b.running_mean");
  EXPECT_EQ(plan.state[1].name, "b.running_var");
  EXPECT_EQ(plan.state_count, 4u);
  const auto state = initial_state(plan);
  EXPECT_EQ(state, (std::vector<float>{0, 0, 1, 1}));
  const auto parameters = initial_parameters(plan, 3);
  EXPECT_EQ(parameters[plan.parameters[1].offset], 1.0f);  // gamma
  EXPECT_EQ(parameters[plan.parameters[2].offset], 0.0f);  // beta
  EXPECT_EQ(parameters, initial_parameters(plan, 3));
  EXPECT_NE(parameters, initial_parameters(plan, 4));
}

TEST(ModelFileTest, InitialValuesVisitedInSmallBlocksAreTheWholeModelsInitialisation) {
  // A server shard draws its rows of a large table block by block: the same numbers as the whole vector.
  const ModelPlan plan = plan_text("e embedding vocab=50 dim=3\nf flatten\nh dense units=5\nout dense units=3\n", {4});
  const std::vector<float> whole = initial_parameters(plan, 11);
  for (const std::size_t block : {std::size_t{1}, std::size_t{7}, std::size_t{64}}) {
    std::vector<float> visited(plan.parameter_count, -9.0f);
    visit_initial_parameters(plan, 11, block, [&](std::size_t index, std::size_t first, std::span<const float> values) {
      EXPECT_LE(values.size(), block);
      std::copy(values.begin(), values.end(), visited.begin() + plan.parameters[index].offset + first);
    });
    EXPECT_EQ(visited, whole) << "blocks of " << block;
  }
}

TEST(ModelFileTest, SkipConnectionsMayComeInAnyLineOrder) {
  // `s` reads `b`, defined below it: evaluation order puts b first.
  const ModelPlan plan = plan_text(
      "a conv2d filters=2\ns add inputs=a,b\nb conv2d filters=2 inputs=input\n"
      "f flatten inputs=s\nout dense units=3\n");
  EXPECT_EQ(plan.nodes[0].spec.name, "a");
  EXPECT_EQ(plan.nodes[1].spec.name, "b");
  EXPECT_EQ(plan.nodes[2].spec.name, "s");
}

TEST(ModelFileTest, MalformedLinesNameTheirLine) {
  expect_usage_error("c1\n", {"m.model:1:", "NAME TYPE"});
  expect_usage_error("ok flatten\n1x dense units=3\n", {"m.model:2:", "'1x' is not a layer name"});
  expect_usage_error("input dense units=3\n", {"m.model:1:", "'input' names the data"});
  expect_usage_error("f flatten\nd dense units\n", {"m.model:2:", "expected key=value, got 'units'"});
  expect_usage_error("f flatten\nf dense units=3\n", {"m.model:2:", "a layer named 'f' already exists"});
  expect_usage_error("f flatten\nd dense units=3 units=4\n", {"m.model:2:", "'units' given twice"});
  expect_usage_error("# nothing\n\n", {"m.model", "no layers"});
}

TEST(ModelFileTest, UnknownTypesAndAttributesAreNamed) {
  expect_usage_error("f flatten\nd densse units=3\n", {"m.model:2:", "unknown layer type 'densse'", "dense"});
  expect_usage_error("c conv2d filter=2\nf flatten\nd dense units=3\n", {"m.model:1:", "needs filters=N"});
  expect_usage_error("c conv2d filters=2 filter=2\nf flatten\nd dense units=3\n",
                     {"m.model:1:", "unknown attribute 'filter'"});
  expect_usage_error("f flatten\nd dense units=three\n", {"m.model:2:", "units=three is not an integer"});
  expect_usage_error("f flatten\nx dropout rate=1\nd dense units=3\n", {"m.model:2:", "rate=1 is outside [0, 1)"});
  expect_usage_error("f flatten\nx dropout rate=-0.1\nd dense units=3\n", {"m.model:2:", "outside [0, 1)"});
  expect_usage_error("f flatten\nd dense units=3 bias=yes\n", {"m.model:2:", "expected true or false"});
}

TEST(ModelFileTest, MissingInputsAndCyclesAreNamed) {
  expect_usage_error("f flatten inputs=nowhere\nd dense units=3\n", {"m.model:1:", "input 'nowhere' names no layer"});
  expect_usage_error("a conv2d filters=2 inputs=b\nb conv2d filters=2 inputs=a\nf flatten inputs=b\nd dense units=3\n",
                     {"m.model:1:", "form a cycle", "a, b"});
  expect_usage_error("a conv2d filters=2 inputs=a\nf flatten\nd dense units=3\n", {"m.model:1:", "cannot read itself"});
  expect_usage_error("a conv2d filters=2\ns add inputs=a\nf flatten\nd dense units=3\n", {"m.model:2:", "at least 2"});
  expect_usage_error("a conv2d filters=2\ns add inputs=a,a\nf flatten\nd dense units=3\n", {"m.model:2:", "twice"});
}

TEST(ModelFileTest, ShapesThatDoNotFitTheirInputAreNamed) {
  expect_usage_error("d dense units=3\n",
                     {"m.model:1:", "layer d (dense)", "needs a flat input, got 4x4x2", "flatten"});
  expect_usage_error("f flatten\nc conv2d filters=2\nd dense units=3\n", {"m.model:2:", "needs an image input", "32"});
  expect_usage_error("c conv2d filters=2 kernel=7 padding=1\nf flatten\nd dense units=3\n",
                     {"m.model:1:", "does not fit"});
  expect_usage_error("p maxpool window=5\nf flatten\nd dense units=3\n", {"m.model:1:", "window does not fit"});
  expect_usage_error(
      "a conv2d filters=2\nb conv2d filters=3 inputs=input\ns add inputs=a,b\nf flatten\nd dense units=3\n",
      {"m.model:3:", "different shapes: 4x4x2 and 4x4x3"});
  expect_usage_error("a maxpool\nc concat inputs=a,input\nf flatten\nd dense units=3\n",
                     {"m.model:2:", "differ before the last axis"});
  expect_usage_error("e embedding vocab=5 dim=2\nf flatten\nd dense units=3\n", {"m.model:1:", "flat input of ids"});
}

TEST(ModelFileTest, TheOutputMustBeTheLastLineUsedAndOfTheClasses) {
  expect_usage_error("f flatten\nd dense units=4\n", {"m.model:2:", "has shape 4", "3 classes", "units=3"});
  expect_usage_error("f flatten\nunused dense units=5\nd dense units=3 inputs=f\n",
                     {"m.model:2:", "output of layer unused is never used"});
  expect_usage_error("f flatten\nd dense units=3 inputs=g\ng relu inputs=f\n", {"m.model:3:", "must be the last line"});
  expect_usage_error("f flatten\nr relu\n", {"m.model", "has shape 32"}, {4, 4, 2});
  expect_usage_error("f flatten\ns scale factor=2\n", {"no parameters"}, {3});
}

TEST(ModelFileTest, PresetsAreModelFilesWithTheDocumentedShape) {
  PresetOptions options;
  options.name = "resnet";
  options.width = 0.25;
  const ModelPlan resnet = plan_model(parse_model_text(preset_text(options), "preset resnet"), {28, 28, 1}, 10);
  EXPECT_EQ(resnet.nodes.back().spec.type, "scale");
  EXPECT_EQ(resnet.nodes.back().plan.output, (Shape{10}));
  std::size_t convolutions = 0, adds = 0, pools = 0, norms = 0;
  for (const PlannedNode& node : resnet.nodes) {
    convolutions += node.spec.type == "conv2d";
    adds += node.spec.type == "add";
    pools += node.spec.type == "maxpool";
    norms += node.spec.type == "batchnorm";
  }
  EXPECT_EQ(convolutions, 8u);  // prep, three stages, two residual blocks of two
  EXPECT_EQ(adds, 2u);
  EXPECT_EQ(pools, 3u);
  EXPECT_EQ(norms, 8u);
  EXPECT_EQ(resnet.parameters[0].shape, (Shape{16, 3, 3, 1}));  // 64 x 0.25 filters, no bias before batch norm
  options.batch_norm = false;
  const ModelPlan plain = plan_model(parse_model_text(preset_text(options), "preset resnet"), {28, 28, 1}, 10);
  EXPECT_TRUE(plain.state.empty());
  EXPECT_EQ(plain.parameters[1].name, "prep.bias");
  options.name = "lenet";
  EXPECT_THROW(preset_text(options), Error);
}

TEST(ModelFileTest, DescribeListsEveryLayerAndTheTotals) {
  const ModelPlan plan = plan_text("c1 conv2d filters=2\nf flatten\nout dense units=3\n");
  const std::string text = describe_model(plan);
  EXPECT_NE(text.find("c1"), std::string::npos);
  EXPECT_NE(text.find("4x4x2"), std::string::npos);
  // conv: 2 x (3*3*2) weights + 2 biases = 38 parameters, 2 * 18 * 2 * 16 = 1152 FLOPs; dense: 99 and 192.
  EXPECT_NE(text.find(" 38 "), std::string::npos) << text;
  EXPECT_NE(text.find("1152"), std::string::npos) << text;
  EXPECT_NE(text.find("137"), std::string::npos) << text;
  EXPECT_EQ(plan.forward_flops, 1152.0 + 192.0);
}

}  // namespace
}  // namespace pstrain::nn

namespace pstrain::nn {
namespace {

using testing::read_text;

TEST(ShippedModelFilesTest, PresetFilesAreThePresetsWithTheirDefaultFlags) {
  for (const std::string name : {"mlp", "cnn", "resnet"}) {
    PresetOptions options;  // the defaults of --hidden, --conv-filters, --kernel-size, --activation, --width
    options.name = name;
    EXPECT_EQ(read_text(std::string(PSTRAIN_EXAMPLES_DIR) + "/models/" + name + ".model"), preset_text(options))
        << name;
  }
}

TEST(ShippedModelFilesTest, TheFashionMnistRecipePlansForFashionMnist) {
  const ModelPlan plan =
      plan_model(read_model_file(std::string(PSTRAIN_EXAMPLES_DIR) + "/models/fashion-mnist-best.model"), {28, 28, 1},
                 10);
  EXPECT_EQ(plan.state.size(), 10u);  // five batch norms, two statistics each
  EXPECT_GT(plan.parameter_count, 500000u);
}

TEST(ShippedModelFilesTest, ThePaddleNplmPlansForBrownSentenceWindows) {
  const ModelPlan plan =
      plan_model(read_model_file(std::string(PSTRAIN_EXAMPLES_DIR) + "/models/paddle-nplm.model"), {4}, 14116);
  // embedding 14116 x 32, hidden 128 x 256 + 256, output 256 x 14116 + 14116
  EXPECT_EQ(plan.parameter_count, 14116u * 32 + 128 * 256 + 256 + 256 * 14116 + 14116);
  EXPECT_EQ(plan.nodes.back().plan.output, (Shape{14116}));
}

// The nplm preset for 4 context ids over a vocabulary of 50: layer names, types, shapes and parameter count.
ModelPlan plan_nplm(std::vector<std::size_t> hidden, bool direct) {
  PresetOptions options;
  options.name = "nplm";
  options.vocab = 50;
  options.classes = 50;
  options.embedding_dim = 8;
  options.hidden = std::move(hidden);
  options.direct = direct;
  return plan_model(parse_model_text(preset_text(options), "preset nplm"), {4}, 50);
}

std::vector<std::string> layer_summary(const ModelPlan& plan) {
  std::vector<std::string> summary;
  for (const PlannedNode& node : plan.nodes)
    summary.push_back(node.spec.name + " " + node.spec.type + " " + to_string(node.plan.output));
  return summary;
}

TEST(NplmPresetTest, HiddenLayerWithoutDirectConnections) {
  const ModelPlan plan = plan_nplm({16}, false);
  EXPECT_EQ(layer_summary(plan),
            (std::vector<std::string>{"embed embedding 4x8", "context flatten 32", "hidden dense 16",
                                      "hidden_act tanh 16", "logits dense 50"}));
  EXPECT_EQ(plan.parameter_count, 50u * 8 + 32 * 16 + 16 + 16 * 50 + 50);
}

TEST(NplmPresetTest, DirectConnectionsAddALinearMapFromTheEmbeddings) {
  const ModelPlan plan = plan_nplm({16}, true);
  EXPECT_EQ(layer_summary(plan),
            (std::vector<std::string>{"embed embedding 4x8", "context flatten 32", "hidden dense 16",
                                      "hidden_act tanh 16", "output dense 50", "direct dense 50", "logits add 50"}));
  EXPECT_EQ(plan.nodes[5].spec.inputs, (std::vector<std::string>{"context"}));
  EXPECT_EQ(plan.parameter_count, 50u * 8 + 32 * 16 + 16 + 16 * 50 + 50 + 32 * 50);
}

TEST(NplmPresetTest, WithoutHiddenLayerTheOutputReadsTheEmbeddings) {
  const ModelPlan plan = plan_nplm({}, false);
  EXPECT_EQ(layer_summary(plan),
            (std::vector<std::string>{"embed embedding 4x8", "context flatten 32", "logits dense 50"}));
}

TEST(NplmPresetTest, RefusesDataWithoutTokensAndSeveralHiddenLayers) {
  PresetOptions options;
  options.name = "nplm";
  EXPECT_THROW(preset_text(options), Error);  // vocab 0: not token data
  options.vocab = 50;
  options.hidden = {16, 16};
  try {
    preset_text(options);
    FAIL() << "two hidden layers accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("at most one hidden layer"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace pstrain::nn
