// The click presets (--model dlrm, --model deepfm; nn/click_presets.h): the layers they plan over CTR data, their
// table sizes from distinct ids, their refusals, and the shipped model files for Criteo.
#include <gtest/gtest.h>

#include "core/error.h"
#include "data/ctr/synthetic_ctr.h"
#include "nn/click_presets.h"
#include "nn/model_plan.h"
#include "nn/model_spec.h"
#include "nn/presets.h"
#include "read_text.h"

namespace pstrain::nn {
namespace {

PresetOptions click_options(const std::string& name, std::size_t dense, std::vector<std::size_t> rows) {
  PresetOptions options;
  options.name = name;
  options.dense_features = dense;
  options.field_rows = std::move(rows);
  options.embedding_dim = 8;
  options.hidden = {32};
  options.bottom_hidden = {16};
  return options;
}

ModelPlan plan_click(const PresetOptions& options) {
  return plan_model(parse_model_text(preset_text(options), "preset " + options.name), {options.dense_features}, 2);
}

// The shape of parameter `name`, or an empty shape when the plan has none of that name.
Shape parameter_shape(const ModelPlan& plan, const std::string& name) {
  for (const ParameterInfo& parameter : plan.parameters) {
    if (parameter.name == name) return parameter.shape;
  }
  return {};
}

TEST(ClickPresets, DlrmHasATablePerFieldTheirDotProductsAndOneLogit) {
  const ModelPlan plan = plan_click(click_options("dlrm", 13, {100, 2048, 16}));
  EXPECT_EQ(plan.loss, LossKind::kBinaryCrossEntropy);
  EXPECT_EQ(plan.categorical_fields, 3u);
  EXPECT_EQ(parameter_shape(plan, "table0.weight"), (Shape{100, 8}));
  EXPECT_EQ(parameter_shape(plan, "table1.weight"), (Shape{2048, 8}));
  EXPECT_EQ(parameter_shape(plan, "table2.weight"), (Shape{16, 8}));
  EXPECT_EQ(parameter_shape(plan, "bottom1.weight"), (Shape{16, 13}));  // 13 -> 16 -> 8
  for (const PlannedNode& node : plan.nodes) {
    // The bottom vector and 3 field vectors: 8 + 4 * 3 / 2 pairwise products.
    if (node.spec.type == "dot_interaction") {
      EXPECT_EQ(node.plan.output, (Shape{8 + 6}));
    }
  }
  EXPECT_EQ(plan.nodes.back().plan.output, Shape{1});
}

TEST(ClickPresets, DeepfmHasWeightsAndVectorsPerFieldWithOrWithoutDenseFeatures) {
  for (const std::size_t dense : {13, 0}) {
    const ModelPlan plan = plan_click(click_options("deepfm", dense, {100, 64}));
    EXPECT_EQ(plan.loss, LossKind::kBinaryCrossEntropy);
    EXPECT_EQ(parameter_shape(plan, "weight1.weight"), (Shape{64, 1}));
    EXPECT_EQ(parameter_shape(plan, "vector0.weight"), (Shape{100, 8}));
    EXPECT_EQ(parameter_shape(plan, "deep1.weight"), (Shape{32, dense + 2 * 8}));  // dense features and vectors
    EXPECT_EQ(plan.nodes.back().plan.output, Shape{1});
  }
}

TEST(ClickPresets, RefuseDataTheyCannotRead) {
  EXPECT_THROW(preset_text(click_options("dlrm", 0, {100})), Error);        // no dense features for the bottom MLP
  EXPECT_THROW(preset_text(click_options("dlrm", 13, {})), Error);          // not CTR data
  EXPECT_THROW(preset_text(click_options("deepfm", 13, {100})), Error);     // an FM needs two fields
  EXPECT_THROW(preset_text(click_options("deepfm", 13, {100, 0})), Error);  // a table of no rows
}

TEST(ClickPresets, TableRowsAreTwiceTheDistinctIdsToAPowerOfTwoWithinBounds) {
  EXPECT_EQ(click_table_rows(0), 16u);
  EXPECT_EQ(click_table_rows(8), 16u);
  EXPECT_EQ(click_table_rows(9), 32u);
  EXPECT_EQ(click_table_rows(1000), 2048u);
  EXPECT_EQ(click_table_rows(1024), 2048u);
  EXPECT_EQ(click_table_rows(10131227), std::size_t{1} << 22);
}

using testing::read_text;

// examples/models/{dlrm,deepfm}-criteo.model: the presets with their default flags over Criteo's 13 dense features
// and 26 fields of Criteo Kaggle's cardinalities (what --table-rows auto gives on that data).
TEST(ClickPresets, ShippedCriteoFilesAreThePresetsWithTheirDefaults) {
  for (const auto& [name, hidden] :
       {std::pair<std::string, std::vector<std::size_t>>{"dlrm", {512, 256}}, {"deepfm", {400, 400}}}) {
    PresetOptions options;
    options.name = name;
    options.dense_features = 13;
    options.embedding_dim = 16;
    options.hidden = hidden;
    for (const std::uint64_t distinct : data::ctr::kSyntheticCardinalities) {
      options.field_rows.push_back(click_table_rows(distinct));
    }
    EXPECT_EQ(read_text(std::string(PSTRAIN_EXAMPLES_DIR) + "/models/" + name + "-criteo.model"), preset_text(options))
        << name;
  }
}

}  // namespace
}  // namespace pstrain::nn
