// A click model's tables of bags (embedding_bag) on the servers by rows (ps/model_tables.h): each planned from the
// fields it reads and their longest bags, beside layers that read the dense features; a field the data does not
// have refused; left whole where the caller knows no fields and asked for what can go by rows; and the trainer's
// cut model telling each bag layer which table it is, its cache as large as a batch's lookups, the hash over the
// whole table's rows.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "core/error.h"
#include "nn/model_plan.h"
#include "nn/model_spec.h"
#include "ps/model_tables.h"

namespace pstrain::ps {
namespace {

// Two tables of bags and a bottom layer on the 3 dense features.
nn::ModelPlan click_model() {
  const char* text =
      "bottom dense units=4 inputs=input\n"
      "shared embedding_bag fields=0,2 rows=100 dim=4\n"
      "wide embedding_bag field=1 rows=50 dim=4\n"
      "x dot_interaction inputs=bottom,shared,wide\n"
      "logit dense units=1 loss=bce\n";
  return nn::plan_model(nn::parse_model_text(text, "click.model"), {3}, 2);
}

const std::vector<std::uint64_t> kLongestBags = {3, 1, 2};  // per field of the data

TEST(ModelTables, BagTablesArePlannedFromTheFieldsTheyReadAndTheirLongestBags) {
  const TablePlan tables = plan_model_tables(click_model(), 2, 8, kLongestBags, ComputedIdTables::kRefuse, "fix");
  ASSERT_EQ(tables.size(), 2u);
  EXPECT_EQ(tables.table(0).name, "shared.weight");
  EXPECT_EQ(tables.table(0).fields, (std::vector<std::size_t>{0, 2}));
  EXPECT_EQ(tables.table(0).ids_per_sample, 5u);  // 3 + 2
  EXPECT_EQ(tables.table(0).rows, 100u);
  EXPECT_EQ(tables.table(0).hash_seed, 0u);  // the first field's number, as embedding_bag seeds by default
  EXPECT_EQ(tables.table(1).fields, (std::vector<std::size_t>{1}));
  EXPECT_EQ(tables.table(1).ids_per_sample, 1u);
  EXPECT_EQ(tables.table(1).hash_seed, 1u);
  EXPECT_TRUE(tables.table(0).reads_bags() && tables.table(1).reads_bags());
}

TEST(ModelTables, ABagTableOfAFieldTheDataLacksIsAUsageErrorNamingTheRemedy) {
  try {
    plan_model_tables(click_model(), 2, 8, std::vector<std::uint64_t>{3, 1}, ComputedIdTables::kRefuse,
                      "use --table-exchange dense");
    FAIL() << "field 2 of data with two fields was accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kUsage);
    EXPECT_NE(std::string(error.what()).find("shared.weight"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("use --table-exchange dense"), std::string::npos) << error.what();
  }
}

TEST(ModelTables, WithoutTheDatasFieldsWhatCanGoByRowsLeavesBagTablesWhole) {
  EXPECT_TRUE(plan_model_tables(click_model(), 2, 8, {}, ComputedIdTables::kStayDense, "").empty());
}

TEST(ModelTables, TheCutModelTellsEachBagLayerItsTableAndHashesOverTheWholeTable) {
  const nn::ModelPlan model = click_model();
  const TablePlan tables = plan_model_tables(model, 2, 8, kLongestBags, ComputedIdTables::kRefuse, "fix");
  const nn::ModelPlan cut = cut_model_plan(model, tables, 8);
  int bag_layers = 0;
  for (const nn::PlannedNode& node : cut.nodes) {
    if (node.spec.type != "embedding_bag") {
      EXPECT_FALSE(node.plan.row_table.has_value()) << node.spec.name;
      continue;
    }
    ++bag_layers;
    const bool shared = node.spec.name == "shared";
    ASSERT_TRUE(node.plan.row_table.has_value()) << node.spec.name;
    EXPECT_EQ(*node.plan.row_table, shared ? 0u : 1u);
    EXPECT_EQ(node.plan.hashed_rows, shared ? 100u : 50u);
    // The cache: the distinct rows 8 samples can look up, at most the table.
    EXPECT_EQ(node.plan.parameters.at(0).shape.at(0), shared ? 40u : 8u);
  }
  EXPECT_EQ(bag_layers, 2);
  // The whole model's layers hold their tables and read no cache.
  for (const nn::PlannedNode& node : model.nodes) EXPECT_FALSE(node.plan.row_table.has_value()) << node.spec.name;
}

}  // namespace
}  // namespace pstrain::ps
