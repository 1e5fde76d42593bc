// lib/inference/keyed_tables.h: a pass folder of a table keyed by the raw id ([n + 1, W], keys/<table>) read back
// as a model whose table has the held rows, its ids looked up by binary search (an id not held reads the default
// row 0), checked against a hand computation of the logits; keys that name no table are refused.
#include <gtest/gtest.h>
#include <unistd.h>

#include "checkpoint/pass_folder.h"
#include "checkpoint/pass_model.h"
#include "compute/backend.h"
#include "core/error.h"
#include "inference/keyed_tables.h"
#include "inference/saved_model.h"
#include "nn/graph_model.h"

namespace pstrain::inference {
namespace {

namespace fs = std::filesystem;

// One table of width 2 shared by fields 0 and 1 (mean), then one dense unit over the two pooled vectors.
constexpr const char* kModel =
    "e embedding_bag fields=0,1 rows=1000 dim=2 pooling=mean\nf flatten\no dense units=1 loss=bce\n";
const std::vector<std::int64_t> kKeys = {-5, 3, 1000};
// Row 0: the default row, zeros; row k + 1: kKeys[k]'s.
const std::vector<float> kTable = {0, 0, 1, 2, 10, 20, 100, 200};
const std::vector<float> kDense = {1, -1, 0.5f, 2, 0.25f};  // o.weight {1, 4}, o.bias {1}

class KeyedTablesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    output_ = fs::temp_directory_path() / ("pstrain-keyed-" + std::to_string(::getpid()));
    fs::remove_all(output_);
    fs::create_directories(output_);
  }
  void TearDown() override { fs::remove_all(output_); }

  fs::path write_pass(const std::string& table_name) {
    checkpoint::PassModelInfo info;
    info.source = "test";
    info.input = {1};
    info.classes = 2;
    const std::vector<nn::ParameterInfo> dense{{"o.weight", {1, 4}, 0, 4}, {"o.bias", {1}, 4, 1}};
    checkpoint::StreamedTensor table{{table_name, {kKeys.size() + 1, 2}, 0, kTable.size()},
                                     [](std::uint64_t first, std::uint64_t count, std::span<float> out) {
                                       std::copy_n(kTable.begin() + static_cast<std::ptrdiff_t>(first * 2), count * 2,
                                                   out.begin());
                                     },
                                     kKeys};
    checkpoint::write_pass_folder(output_, 0, dense, kDense, false, {table}, {},
                                  checkpoint::pass_model_files(kModel, info));
    return output_ / checkpoint::pass_folder_name(0);
  }

  fs::path output_;
};

TEST(KeyedRow, BinarySearchOfTheIdsBitsAsInt64AndTheDefaultRowOtherwise) {
  EXPECT_EQ(keyed_row(kKeys, static_cast<std::uint64_t>(std::int64_t{-5})), 1u);
  EXPECT_EQ(keyed_row(kKeys, 3), 2u);
  EXPECT_EQ(keyed_row(kKeys, 1000), 3u);
  for (const std::uint64_t absent : {std::uint64_t{0}, std::uint64_t{4}, std::uint64_t{999}, ~std::uint64_t{0}}) {
    EXPECT_EQ(keyed_row(kKeys, absent), 0u) << absent;
  }
  EXPECT_EQ(keyed_row({}, 3), 0u);
}

TEST_F(KeyedTablesTest, PlansTheHeldRowsAndScoresAsAHandComputation) {
  const SavedModel saved = load_saved_model(write_pass("e.weight"), {}, nullptr);
  ASSERT_EQ(saved.keyed.size(), 1u);
  EXPECT_EQ(saved.keyed[0].keys, kKeys);
  EXPECT_EQ(saved.plan.parameters[0].shape, (nn::Shape{4, 2}));  // the held rows, not rows=1000
  EXPECT_EQ(saved.plan.parameter_count, kTable.size() + kDense.size());
  const auto backend = compute::make_cpu_backend();
  const auto model = nn::make_graph_model(*backend, saved.plan, 2);
  model->set_parameters(saved.parameters);
  // Sample 0: field 0 {3, 7 (not held)}, field 1 {-5}; sample 1: field 0 {} , field 1 {1000, 1000, 42}.
  core::JaggedIds bags{2, 2, {3, 7, static_cast<std::uint64_t>(std::int64_t{-5}), 1000, 1000, 42}, {0, 2, 2, 3, 6}};
  model->set_categorical(&bags);
  KeyedLookups lookups(saved.plan, saved.keyed);
  lookups.place(bags, *model);
  std::vector<float> logits(2);
  const std::vector<float> features(2, 0.0f);
  model->evaluate_batch_logits(features, std::vector<std::int32_t>{0, 1}, 2, logits);
  // Means: sample 0 (10 + 0) / 2, (20 + 0) / 2 and (1, 2); sample 1 zeros and (200 / 3, 400 / 3).
  const float z0 = 1 * 5.0f - 1 * 10.0f + 0.5f * 1 + 2 * 2 + 0.25f;
  const float z1 = 0.5f * (200.0f / 3) + 2 * (400.0f / 3) + 0.25f;
  EXPECT_NEAR(logits[0], z0, 1e-5);
  EXPECT_NEAR(logits[1], z1, 1e-3);
}

TEST_F(KeyedTablesTest, KeysOfNoTableOfTheModelAreRefusedAndInitFromStillRefuses) {
  const fs::path pass = write_pass("e.weight");
  try {
    checkpoint::read_pass_parameters(pass, {{"e.weight", {4, 2}, 0, 8}}, 8);
    FAIL() << "read the keyed folder without being asked to";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("keyed by the raw id"), std::string::npos) << error.what();
  }
  fs::remove_all(pass);
  try {
    load_saved_model(write_pass("other.weight"), {}, nullptr);
    FAIL() << "keys of a table the model lacks";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kInputData);
    EXPECT_NE(std::string(error.what()).find("no embedding_bag table"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace pstrain::inference
