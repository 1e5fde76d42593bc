// The CTR layers' values against direct computations (a bag's rows summed by hand, dot products and the FM term
// pair by pair), the id hash against uniform hashing, and every mistake a model file can make with them.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <utility>

#include "backend_test_util.h"
#include "core/error.h"
#include "ctr_test_util.h"
#include "nn/id_hash.h"
#include "nn/layer_registry.h"
#include "nn/model_plan.h"

namespace pstrain::nn {
namespace {

using compute::testing::random_floats;

// One layer of `type` over host vectors (the CPU backend's buffers are host memory): its parameters from
// `values`, gradients written next to them.
struct BuiltLayer {
  LayerPlan plan;
  std::vector<float> values;
  std::vector<float> gradients;
  std::unique_ptr<Layer> layer;
};

BuiltLayer build_layer(compute::Backend& backend, const std::string& type, std::map<std::string, std::string> text,
                       const std::vector<Shape>& inputs, std::size_t max_batch) {
  const LayerType& layer_type = *layer_registry().find(type);
  BuiltLayer built;
  LayerAttributes attributes(text, "test: ");
  built.plan = layer_type.plan(attributes, inputs);
  attributes.check_all_used();
  LayerBuild build{.backend = backend,
                   .inputs = inputs,
                   .plan = built.plan,
                   .parameters = {},
                   .state = {},
                   .max_batch = max_batch};
  if (!built.plan.parameters.empty()) {
    built.values = random_floats(element_count(built.plan.parameters[0].shape), 3);
    built.gradients.assign(built.values.size(), -7.0f);  // backward must overwrite every element
    build.parameters.push_back({built.values.data(), built.gradients.data(), 0});
  }
  LayerAttributes create_attributes(text, "test: ");
  built.layer = layer_type.create(build, create_attributes);
  return built;
}

class CtrLayerTest : public compute::testing::BackendTest {};

TEST_F(CtrLayerTest, EmbeddingBagSumsAndAveragesTheHashedRowsAndGivesZerosForAnEmptyBag) {
  const std::uint64_t big = (1ULL << 53) + 1;  // 2^53 + 1: no double holds it
  const core::JaggedIds ids = testing::fields_of({{{5}, {}, {5, big, big}}, {{7, 8}, {9}, {}}});
  for (const std::string pooling : {"sum", "mean"}) {
    BuiltLayer bag =
        build_layer(*backend_, "embedding_bag",
                    {{"fields", "0,1"}, {"rows", "11"}, {"dim", "2"}, {"seed", "4"}, {"pooling", pooling}}, {}, 3);
    ASSERT_EQ(bag.plan.output, (Shape{2, 2}));
    std::vector<float> output(3 * 4, -1.0f);
    const StepContext step{.batch = 3, .categorical = &ids};
    bag.layer->forward(step, {}, output.data());
    for (std::size_t s = 0; s < 3; ++s) {
      for (std::size_t f = 0; f < 2; ++f) {
        const auto members = ids.bag(f, s);
        for (std::size_t k = 0; k < 2; ++k) {
          double expected = 0;
          for (const std::uint64_t id : members) expected += bag.values[hashed_row(id, 4, 11) * 2 + k];
          if (pooling == "mean" && !members.empty()) expected /= static_cast<double>(members.size());
          EXPECT_NEAR(output[(s * 2 + f) * 2 + k], expected, 1e-6) << pooling << " sample " << s << " field " << f;
        }
      }
    }
  }
}

TEST_F(CtrLayerTest, EmbeddingBagBackwardOverwritesTheTableGradientAndFillsOnlyTouchedRows) {
  const core::JaggedIds ids = testing::fields_of({{{3, 3, 4}, {}}});
  BuiltLayer bag = build_layer(*backend_, "embedding_bag", {{"field", "0"}, {"rows", "1000"}, {"dim", "1"}}, {}, 2);
  std::vector<float> output(2);
  const StepContext step{.batch = 2, .training = true, .categorical = &ids};
  bag.layer->forward(step, {}, output.data());
  const std::vector<float> dy{0.5f, 100.0f};  // sample 1's bag is empty: its gradient goes nowhere
  bag.layer->backward(step, {}, output.data(), dy.data(), {});
  std::vector<float> expected(1000, 0.0f);
  expected[hashed_row(3, 0, 1000)] += 1.0f;  // id 3 twice
  expected[hashed_row(4, 0, 1000)] += 0.5f;
  EXPECT_EQ(bag.gradients, expected);
}

// A table gradient kept sparse (local training: Layer::keep_table_gradient_sparse) is, step after step, the gradient
// a whole overwrite gives, and the layer names exactly the rows holding gradient: batches that share rows, and
// batches that touch rows the step before did not.
TEST_F(CtrLayerTest, EmbeddingBagsSparseTableGradientIsTheWholeGradientAndNamesTheTouchedRows) {
  const std::map<std::string, std::string> text{{"fields", "0,1"}, {"rows", "64"}, {"dim", "3"}};
  BuiltLayer sparse = build_layer(*backend_, "embedding_bag", text, {}, 6);
  BuiltLayer whole = build_layer(*backend_, "embedding_bag", text, {}, 6);
  ASSERT_TRUE(sparse.layer->can_keep_table_gradient_sparse());
  EXPECT_FALSE(sparse.layer->touched_rows().has_value());  // until asked
  sparse.layer->keep_table_gradient_sparse();
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    std::mt19937_64 engine(seed);  // 0-3 ids per bag out of 200: each step touches rows the one before did not
    std::vector<std::vector<std::vector<std::uint64_t>>> bags(2, std::vector<std::vector<std::uint64_t>>(6));
    for (auto& field : bags) {
      for (auto& bag : field) {
        for (std::uint64_t k = engine() % 4; k > 0; --k) bag.push_back(engine() % 200);
      }
    }
    const core::JaggedIds ids = testing::fields_of(bags);
    const StepContext step{.batch = 6, .training = true, .categorical = &ids};
    const std::vector<float> dy = random_floats(6 * 2 * 3, seed);
    std::vector<float> output(6 * 2 * 3);
    for (BuiltLayer* built : {&sparse, &whole}) {
      built->layer->forward(step, {}, output.data());
      built->layer->backward(step, {}, output.data(), dy.data(), {});
    }
    ASSERT_EQ(sparse.gradients, whole.gradients) << "step " << seed;
    const std::optional<TouchedRows> touched = sparse.layer->touched_rows();
    ASSERT_TRUE(touched.has_value());
    EXPECT_EQ(touched->offset, 0u);
    EXPECT_EQ(touched->width, 3u);
    EXPECT_EQ(touched->size, 64u * 3u);
    std::set<std::uint64_t> expected;
    for (std::size_t f = 0; f < 2; ++f) {
      for (std::size_t s = 0; s < 6; ++s) {
        for (const std::uint64_t id : ids.bag(f, s)) expected.insert(hashed_row(id, 0, 64));
      }
    }
    EXPECT_EQ(std::vector<std::uint64_t>(touched->rows.begin(), touched->rows.end()),
              std::vector<std::uint64_t>(expected.begin(), expected.end()))
        << "step " << seed;
  }
}

TEST_F(CtrLayerTest, EmbeddingBagWithoutTheBatchsFieldsIsAWiringErrorNamingSetCategorical) {
  BuiltLayer bag = build_layer(*backend_, "embedding_bag", {{"field", "2"}, {"rows", "4"}, {"dim", "2"}}, {}, 2);
  std::vector<float> output(4);
  try {
    bag.layer->forward(StepContext{.batch = 2}, {}, output.data());
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("set_categorical"), std::string::npos) << error.what();
  }
  const core::JaggedIds two_fields = testing::random_fields(2, 2, 1);
  EXPECT_THROW(bag.layer->forward(StepContext{.batch = 2, .categorical = &two_fields}, {}, output.data()), Error);
}

TEST(IdHashTest, SpreadsSequentialIdsLikeUniformHashing) {
  // n = R/2 ids: expected rows in use R(1 - e^-0.5) = 25786.9 of 65536, standard deviation ~60.
  const std::uint64_t rows = 1 << 16;
  for (const std::uint64_t seed : {0ULL, 1ULL, 12345ULL}) {
    std::set<std::uint64_t> used;
    for (std::uint64_t id = 0; id < rows / 2; ++id) used.insert(hashed_row(id, seed, rows));
    const double expected = static_cast<double>(rows) * (1 - std::exp(-0.5));
    EXPECT_NEAR(static_cast<double>(used.size()), expected, 300) << "seed " << seed;
  }
}

TEST(IdHashTest, SeedsGiveIndependentRows) {
  const std::uint64_t rows = 1 << 16;
  int same = 0;
  for (std::uint64_t id = 0; id < 10000; ++id) same += hashed_row(id, 1, rows) == hashed_row(id, 2, rows);
  EXPECT_LT(same, 5);  // 10000 / 65536 = 0.15 expected
}

TEST(IdHashTest, SplitMixIsThePublishedFunction) {
  // The first output of Vigna's splitmix64 seeded with 0 (its state advances by the golden gamma first).
  EXPECT_EQ(splitmix64(0), 0xE220A8397B1DCDAFULL);
}

// The Gram matrix's upper triangle after the bottom vector, pair by pair.
TEST_F(CtrLayerTest, DotInteractionIsTheBottomThenEveryPairsDotProductInOrder) {
  const int batch = 3;
  const std::size_t d = 2;
  BuiltLayer dot = build_layer(*backend_, "dot_interaction", {}, {{d}, {d}, {2, d}}, batch);
  ASSERT_EQ(dot.plan.output, (Shape{d + 6}));  // 4 vectors: 6 pairs
  const auto bottom = random_floats(batch * d, 1);
  const auto field = random_floats(batch * d, 2);
  const auto stack = random_floats(batch * 2 * d, 3);
  std::vector<float> output(batch * (d + 6));
  const std::vector<const float*> inputs{bottom.data(), field.data(), stack.data()};
  dot.layer->forward(StepContext{.batch = batch}, inputs, output.data());
  for (int s = 0; s < batch; ++s) {
    const std::vector<const float*> vectors{&bottom[s * d], &field[s * d], &stack[s * 2 * d], &stack[s * 2 * d + d]};
    EXPECT_EQ(output[s * (d + 6)], bottom[s * d]);
    EXPECT_EQ(output[s * (d + 6) + 1], bottom[s * d + 1]);
    std::size_t column = d;
    for (std::size_t i = 0; i < 4; ++i) {
      for (std::size_t j = i + 1; j < 4; ++j, ++column) {
        const double expected = vectors[i][0] * vectors[j][0] + vectors[i][1] * vectors[j][1];
        EXPECT_NEAR(output[s * (d + 6) + column], expected, 1e-6) << "sample " << s << " pair " << i << "," << j;
      }
    }
  }
}

TEST_F(CtrLayerTest, FmIsTheSumOfPairwiseDotProducts) {
  const int batch = 4;
  const std::size_t d = 3;
  BuiltLayer fm = build_layer(*backend_, "fm", {}, {{3, d}, {d}}, batch);
  ASSERT_EQ(fm.plan.output, (Shape{1}));
  const auto stack = random_floats(batch * 3 * d, 5);
  const auto single = random_floats(batch * d, 6);
  std::vector<float> output(batch);
  const std::vector<const float*> inputs{stack.data(), single.data()};
  fm.layer->forward(StepContext{.batch = batch}, inputs, output.data());
  for (int s = 0; s < batch; ++s) {
    const std::vector<const float*> v{&stack[s * 3 * d], &stack[s * 3 * d + d], &stack[s * 3 * d + 2 * d],
                                      &single[s * d]};
    double expected = 0;
    for (std::size_t i = 0; i < 4; ++i) {
      for (std::size_t j = i + 1; j < 4; ++j) {
        for (std::size_t k = 0; k < d; ++k) expected += static_cast<double>(v[i][k]) * v[j][k];
      }
    }
    EXPECT_NEAR(output[s], expected, 1e-5) << "sample " << s;
  }
}

void expect_usage_error(const std::string& text, const std::vector<std::string>& parts, std::size_t classes = 2) {
  try {
    plan_model(parse_model_text(text, "m.model"), {3}, classes);
    FAIL() << "expected an error for:\n" << text;
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kUsage) << error.what();
    for (const std::string& part : parts) {
      EXPECT_NE(std::string(error.what()).find(part), std::string::npos) << "'" << part << "' not in: " << error.what();
    }
  }
}

TEST(CtrModelFileTest, EmbeddingBagMistakesAreNamed) {
  const std::string tail = "o dense units=1 loss=bce\n";
  expect_usage_error("e embedding_bag rows=4 dim=2\n" + tail, {"m.model:1:", "needs field=F"});
  expect_usage_error("e embedding_bag field=0 fields=1,2 rows=4 dim=2\n" + tail, {"m.model:1:", "not both"});
  expect_usage_error("e embedding_bag field=0 dim=2\n" + tail, {"m.model:1:", "needs rows=N"});
  expect_usage_error("e embedding_bag fields=0,0 rows=4 dim=2\n" + tail, {"m.model:1:", "names 0 twice"});
  expect_usage_error("e embedding_bag fields=3-1 rows=4 dim=2\n" + tail, {"m.model:1:", "'3-1'"});
  expect_usage_error("e embedding_bag fields=0-999999999 rows=4 dim=2\n" + tail, {"m.model:1:", "more than 4096"});
  expect_usage_error("e embedding_bag field=0 rows=4 dim=2 pooling=max\n" + tail, {"m.model:1:", "pooling=max"});
  expect_usage_error("d dense units=2\ne embedding_bag field=0 rows=4 dim=2 inputs=d\n" + tail,
                     {"m.model:2:", "reads no layer", "remove inputs="});
}

TEST(CtrModelFileTest, InteractionMistakesAreNamed) {
  expect_usage_error(
      "a embedding_bag field=0 rows=4 dim=2\nb embedding_bag field=1 rows=4 dim=3\n"
      "f fm inputs=a,b\no dense units=1 loss=bce\n",
      {"m.model:3:", "one width"});
  expect_usage_error("a embedding_bag field=0 rows=4 dim=2\nf fm inputs=a\no dense units=1 loss=bce\n",
                     {"m.model:2:", "at least 2 vectors"});
  expect_usage_error(
      "a embedding_bag fields=0,1 rows=4 dim=2\nb embedding_bag field=1 rows=4 dim=2\n"
      "x dot_interaction inputs=a,b\no dense units=1 loss=bce\n",
      {"m.model:3:", "bottom MLP's output"});
}

TEST(CtrModelFileTest, LossMistakesAreNamed) {
  expect_usage_error("o dense units=2 loss=bce\n", {"m.model:1:", "loss=bce reads one logit", "units=1"});
  expect_usage_error("o dense units=1 loss=bce\n", {"m.model:1:", "2 classes", "have 3"}, 3);
  expect_usage_error("h dense units=4 loss=bce\no dense units=1\n", {"m.model:1:", "loss= belongs on the last line"});
  expect_usage_error("o dense units=1 loss=hinge\n", {"m.model:1:", "loss=hinge", "softmax or bce"});
}

TEST(CtrModelFileTest, ThePlanSaysWhichFieldsAndWhichLoss) {
  const ModelPlan plan = plan_model(parse_model_text("a embedding_bag fields=1,4 rows=4 dim=2\nf fm\n"
                                                     "o dense units=1 inputs=f loss=bce\n",
                                                     "m.model"),
                                    {3}, 2);
  EXPECT_EQ(plan.categorical_fields, 5u);
  EXPECT_EQ(plan.nodes[0].plan.id_hash_seed, 1u);  // the first field it reads
  EXPECT_EQ(plan.loss, LossKind::kBinaryCrossEntropy);
  EXPECT_TRUE(plan.parameters[0].row_table);
  EXPECT_EQ(plan.parameters[0].shape, (Shape{4, 2}));
  EXPECT_TRUE(plan.nodes[0].inputs.empty());
  EXPECT_NE(describe_model(plan).find("loss: bce; reads 5 categorical field(s)"), std::string::npos)
      << describe_model(plan);
  const ModelPlan softmax = plan_model(parse_model_text("o dense units=3\n", "m.model"), {3}, 3);
  EXPECT_EQ(softmax.categorical_fields, 0u);
  EXPECT_EQ(softmax.loss, LossKind::kSoftmaxCrossEntropy);
}

// The DLRM and DeepFM descriptions that docs/model-files.md shows, read from it: they must stay valid.
TEST(CtrModelFileTest, TheDocumentedDlrmAndDeepFmDescriptionsPlan) {
  std::ifstream file(std::string(PSTRAIN_EXAMPLES_DIR) + "/../docs/model-files.md");
  ASSERT_TRUE(file) << "docs/model-files.md";
  std::stringstream text;
  text << file.rdbuf();
  const std::string doc = text.str();
  for (const auto& [title, fields] : {std::pair<std::string, std::size_t>{"# DLRM", 8}, {"# DeepFM", 8}}) {
    const std::size_t start = doc.find("```text\n" + title);
    ASSERT_NE(start, std::string::npos) << title;
    const std::size_t body = doc.find('\n', start) + 1;
    const std::string description = doc.substr(body, doc.find("```", body) - body);
    const ModelPlan plan = plan_model(parse_model_text(description, title), {13}, 2);
    EXPECT_EQ(plan.categorical_fields, fields) << title;
    EXPECT_EQ(plan.loss, LossKind::kBinaryCrossEntropy) << title;
  }
}

}  // namespace
}  // namespace pstrain::nn
