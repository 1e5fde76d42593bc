// A row table's initialisation drawn row by row: a parameter server draws only its own rows (r mod shards ==
// shard), and they equal those rows of the whole model's draw; the dense parameters drawn without the tables
// equal the whole draw's; a table's values depend on the seed and its name, not on the layers around it.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "nn/model_plan.h"

namespace pstrain::nn {
namespace {

constexpr std::size_t kRows = 50, kWidth = 3;

ModelPlan plan_with_table(const std::string& after = "h dense units=5\nout dense units=3\n") {
  return plan_model(parse_model_text("e embedding vocab=50 dim=3\nf flatten\n" + after, "t.model"), {4}, 3);
}

TEST(TableInitTest, EveryShardsRowsEqualThoseRowsOfTheWholeModelsDraw) {
  const ModelPlan plan = plan_with_table();
  ASSERT_EQ(plan.parameters[0].name, "e.weight");
  const std::vector<float> whole = initial_parameters(plan, 11);
  for (const std::uint64_t shards : {1u, 2u, 3u, 4u, 7u}) {
    for (std::uint64_t shard = 0; shard < shards; ++shard) {
      const std::size_t rows = (kRows - shard + shards - 1) / shards;
      std::vector<float> own(rows * kWidth, -9.0f);
      initial_rows(plan, 11, 0, shard, shards, own);
      for (std::size_t k = 0; k < rows; ++k) {
        const std::size_t row = shard + k * shards;
        for (std::size_t c = 0; c < kWidth; ++c) {
          ASSERT_EQ(own[k * kWidth + c], whole[plan.parameters[0].offset + row * kWidth + c])
              << "shard " << shard << " of " << shards << ", row " << row << ", column " << c;
        }
      }
    }
  }
}

TEST(TableInitTest, ParametersDrawnWithoutOthersEqualTheWholeModelsDraw) {
  const ModelPlan plan = plan_with_table();
  const std::vector<float> whole = initial_parameters(plan, 5);
  // Leaving out the table (a server's dense part) and a dense weight (its engine draws skipped, not made).
  for (const std::string& left_out : {std::string("e.weight"), std::string("h.weight")}) {
    std::vector<float> visited(plan.parameter_count, -9.0f), expected = whole;
    visit_initial_parameters(
        plan, 5, 4,
        [&](std::size_t index, std::size_t first, std::span<const float> values) {
          std::copy(values.begin(), values.end(), visited.begin() + plan.parameters[index].offset + first);
        },
        [&](std::size_t index) { return plan.parameters[index].name != left_out; });
    for (const ParameterInfo& info : plan.parameters) {
      if (info.name != left_out) continue;
      std::fill_n(expected.begin() + info.offset, info.size, -9.0f);
    }
    EXPECT_EQ(visited, expected) << "without " << left_out;
  }
}

TEST(TableInitTest, TableValuesDependOnTheSeedAndNameOnlyAndStayInsideTheLimit) {
  const auto table = [](const ModelPlan& plan, std::uint64_t seed) {
    const std::vector<float> all = initial_parameters(plan, seed);
    return std::vector<float>(all.begin(), all.begin() + kRows * kWidth);
  };
  const ModelPlan plan = plan_with_table();
  const std::vector<float> values = table(plan, 11);
  EXPECT_EQ(values, table(plan_with_table("out dense units=3\n"), 11));
  EXPECT_NE(values, table(plan, 12));
  const float limit = static_cast<float>(1.0 / std::sqrt(3.0));  // the embedding's default: 1/sqrt(dim)
  double sum = 0;
  for (const float value : values) {
    EXPECT_LE(std::abs(value), limit);
    sum += value;
  }
  EXPECT_LT(std::abs(sum / static_cast<double>(values.size())), 0.1 * limit);  // centred (150 draws)
}

TEST(TableInitTest, RowsOfATensorDrawnFromTheEngineAreRefused) {
  const ModelPlan plan = plan_with_table();
  std::vector<float> row(5 * 3);
  ASSERT_EQ(plan.parameters[1].name, "h.weight");  // {5, 3}, drawn in layout order
  EXPECT_THROW(initial_rows(plan, 1, 1, 0, 1, row), Error);
}

}  // namespace
}  // namespace pstrain::nn
