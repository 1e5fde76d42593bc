// Row optimizers (sparse tables) against dense references: sgd and adagrad give a touched row exactly the bits a
// dense update over the whole table gives it (with weight decay 0, untouched rows stay put in both); lazy
// momentum and lazy Adam follow their documented rules, checked against plain loops written from the formulas.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

#include "core/error.h"
#include "optim/row_optimizer.h"

namespace pstrain::optim {
namespace {

constexpr std::size_t kRows = 12;
constexpr std::size_t kWidth = 5;
constexpr int kSteps = 6;

struct SparseStep {
  std::vector<std::uint32_t> rows;
  std::vector<float> gradients;  // one row per entry of rows
  std::vector<float> dense;      // the same gradient as a whole table, zero elsewhere
};

std::vector<SparseStep> random_steps(std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<SparseStep> steps(kSteps);
  for (SparseStep& step : steps) {
    std::set<std::uint32_t> touched;
    while (touched.size() < 4) touched.insert(static_cast<std::uint32_t>(engine() % kRows));
    step.rows.assign(touched.begin(), touched.end());
    step.dense.assign(kRows * kWidth, 0.0f);
    for (const std::uint32_t row : step.rows) {
      for (std::size_t j = 0; j < kWidth; ++j) {
        const float g = normal(engine);
        step.gradients.push_back(g);
        step.dense[row * kWidth + j] = g;
      }
    }
  }
  return steps;
}

std::vector<float> random_table(std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::normal_distribution<float> normal(0.0f, 0.5f);
  std::vector<float> table(kRows * kWidth);
  for (float& w : table) w = normal(engine);
  return table;
}

OptimizerConfig config_for(const std::string& kind) {
  OptimizerConfig config;
  config.kind = kind;
  config.learning_rate = 0.1f;
  config.momentum = 0.9f;
  return config;
}

void expect_same_bits_as_dense(const std::string& kind) {
  const auto steps = random_steps(1);
  std::vector<float> sparse_table = random_table(2);
  std::vector<float> dense_table = sparse_table;
  auto rows = make_row_optimizer(config_for(kind), kRows, kWidth);
  auto dense = make_optimizer(config_for(kind), kRows * kWidth);
  for (const SparseStep& step : steps) {
    rows->step(sparse_table, step.rows, step.gradients);
    dense->step(dense_table, step.dense);
  }
  for (std::size_t i = 0; i < dense_table.size(); ++i) {
    EXPECT_EQ(std::bit_cast<std::uint32_t>(sparse_table[i]), std::bit_cast<std::uint32_t>(dense_table[i]))
        << kind << " element " << i << ": " << sparse_table[i] << " vs " << dense_table[i];
  }
}

// --mode geo's servers: the rows' change adder gives a changed row the bits of the dense change adder over the whole
// table (whose untouched rows get +0), and leaves every other row and keeps no state.
TEST(RowOptimizers, RowChangeAdderGivesTheBitsOfTheDenseChangeAdder) {
  const auto steps = random_steps(3);
  std::vector<float> sparse_table = random_table(4);
  std::vector<float> dense_table = sparse_table;
  auto rows = make_row_change_adder(kRows, kWidth);
  auto dense = make_change_adder(kRows * kWidth);
  for (const SparseStep& step : steps) {
    rows->step(sparse_table, step.rows, step.gradients);
    dense->step(dense_table, step.dense);
  }
  EXPECT_TRUE(rows->state().empty());
  EXPECT_EQ(rows->steps_taken(), static_cast<std::uint64_t>(kSteps));
  for (std::size_t i = 0; i < dense_table.size(); ++i) {
    EXPECT_EQ(std::bit_cast<std::uint32_t>(sparse_table[i]), std::bit_cast<std::uint32_t>(dense_table[i]))
        << "element " << i << ": " << sparse_table[i] << " vs " << dense_table[i];
  }
  EXPECT_NE(sparse_table, random_table(4));  // the changes did arrive
}

TEST(RowOptimizers, SgdGivesTheBitsOfDenseSgd) {
  expect_same_bits_as_dense("sgd");
}
TEST(RowOptimizers, AdagradGivesTheBitsOfDenseAdagrad) {
  expect_same_bits_as_dense("adagrad");
}

TEST(RowOptimizers, LazyMomentumMovesOnlyTouchedRowsWithTheirOwnVelocity) {
  const auto steps = random_steps(3);
  std::vector<float> table = random_table(4);
  std::vector<double> expected(table.begin(), table.end());
  std::vector<double> velocity(table.size(), 0.0);
  auto rows = make_row_optimizer(config_for("momentum"), kRows, kWidth);
  for (const SparseStep& step : steps) {
    rows->step(table, step.rows, step.gradients);
    for (std::size_t k = 0; k < step.rows.size(); ++k) {
      for (std::size_t j = 0; j < kWidth; ++j) {
        const std::size_t at = step.rows[k] * kWidth + j;
        velocity[at] = 0.9 * velocity[at] + step.gradients[k * kWidth + j];
        expected[at] -= 0.1 * velocity[at];
      }
    }
  }
  for (std::size_t i = 0; i < table.size(); ++i) EXPECT_NEAR(table[i], expected[i], 1e-5) << "element " << i;
}

TEST(RowOptimizers, LazyAdamCorrectsBiasByTheTableStepCountAsSparseAdam) {
  const auto steps = random_steps(5);
  std::vector<float> table = random_table(6);
  std::vector<double> expected(table.begin(), table.end());
  std::vector<double> m(table.size(), 0.0);
  std::vector<double> v(table.size(), 0.0);
  auto rows = make_row_optimizer(config_for("adam"), kRows, kWidth);
  for (int t = 1; t <= kSteps; ++t) {
    const SparseStep& step = steps[static_cast<std::size_t>(t - 1)];
    rows->step(table, step.rows, step.gradients);
    for (std::size_t k = 0; k < step.rows.size(); ++k) {
      for (std::size_t j = 0; j < kWidth; ++j) {
        const std::size_t at = step.rows[k] * kWidth + j;
        const double g = step.gradients[k * kWidth + j];
        m[at] = 0.9 * m[at] + 0.1 * g;
        v[at] = 0.999 * v[at] + 0.001 * g * g;
        const double m_hat = m[at] / (1.0 - std::pow(0.9, t));
        const double v_hat = v[at] / (1.0 - std::pow(0.999, t));
        expected[at] -= 0.1 * m_hat / (std::sqrt(v_hat) + 1e-8);
      }
    }
  }
  for (std::size_t i = 0; i < table.size(); ++i) EXPECT_NEAR(table[i], expected[i], 1e-5) << "element " << i;
  EXPECT_EQ(rows->steps_taken(), static_cast<std::uint64_t>(kSteps));
}

// Row-wise Adagrad against the formula in doubles (optim/optimizer.h), with weight decay: one accumulator per row,
// grown by the mean square of the row's decayed gradient; untouched rows and accumulators stay.
TEST(RowOptimizers, RowwiseAdagradKeepsOneAccumulatorPerRowGrownByTheMeanSquare) {
  const auto steps = random_steps(7);
  std::vector<float> table = random_table(8);
  std::vector<double> expected(table.begin(), table.end());
  std::vector<double> sum(kRows, 0.0);
  OptimizerConfig config = config_for(kRowwiseAdagrad);
  config.weight_decay = 0.01f;
  auto rows = make_row_optimizer(config, kRows, kWidth);
  for (const SparseStep& step : steps) {
    rows->step(table, step.rows, step.gradients);
    for (std::size_t k = 0; k < step.rows.size(); ++k) {
      const std::size_t row = step.rows[k];
      std::vector<double> decayed(kWidth);
      double squares = 0.0;
      for (std::size_t j = 0; j < kWidth; ++j) {
        decayed[j] = step.gradients[k * kWidth + j] + 0.01 * expected[row * kWidth + j];
        squares += decayed[j] * decayed[j];
      }
      sum[row] += squares / kWidth;
      for (std::size_t j = 0; j < kWidth; ++j) expected[row * kWidth + j] -= 0.1 * decayed[j] / std::sqrt(sum[row]);
    }
  }
  for (std::size_t i = 0; i < table.size(); ++i) EXPECT_NEAR(table[i], expected[i], 1e-5) << "element " << i;
  const auto state = rows->state();
  ASSERT_EQ(state.size(), 1u);
  EXPECT_EQ(state[0].first, kRowwiseAdagradState);
  ASSERT_EQ(state[0].second->size(), kRows);  // one float per row: 1/kWidth of Adagrad's
  for (std::size_t r = 0; r < kRows; ++r) EXPECT_NEAR((*state[0].second)[r], sum[r], 1e-5) << "row " << r;
}

// A row's first update under row-wise Adagrad moves it by lr * g / rms(g): the step is the same for every row
// whatever its gradient's scale, as Adagrad's first step is lr * sign(g) per element.
TEST(RowOptimizers, RowwiseAdagradsFirstStepIsTheGradientOverItsRootMeanSquare) {
  auto rows = make_row_optimizer(config_for(kRowwiseAdagrad), 2, 2);
  std::vector<float> table(4, 0.0f);
  const std::vector<std::uint32_t> touched{1};
  rows->step(table, touched, std::vector<float>{300.0f, 400.0f});  // rms = sqrt((9e4 + 16e4) / 2)
  const double rms = std::sqrt((9e4 + 16e4) / 2.0);
  EXPECT_EQ(table[0], 0.0f);
  EXPECT_EQ(table[1], 0.0f);
  EXPECT_NEAR(table[2], -0.1 * 300.0 / rms, 1e-6);
  EXPECT_NEAR(table[3], -0.1 * 400.0 / rms, 1e-6);
}

TEST(RowOptimizers, StateIsLaidOutLikeTheTable) {
  for (const std::string kind : {"adagrad", "momentum", "adam"}) {
    auto rows = make_row_optimizer(config_for(kind), kRows, kWidth);
    ASSERT_FALSE(rows->state().empty()) << kind;
    for (const auto& [name, vector] : rows->state()) EXPECT_EQ(vector->size(), kRows * kWidth) << kind << " " << name;
  }
}

TEST(RowOptimizers, BadSettingsAreRefusedAsForDenseOptimizers) {
  OptimizerConfig config = config_for("rmsprop");
  EXPECT_THROW(make_row_optimizer(config, kRows, kWidth), Error);
  config = config_for(kRowwiseAdagrad);
  config.learning_rate = 0.0f;
  EXPECT_THROW(make_row_optimizer(config, kRows, kWidth), Error);
  config = config_for("sgd");
  config.learning_rate = -1.0f;
  EXPECT_THROW(make_row_optimizer(config, kRows, kWidth), Error);
}

}  // namespace
}  // namespace pstrain::optim
