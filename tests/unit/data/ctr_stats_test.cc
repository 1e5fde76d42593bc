// Distinct-id estimates (HyperLogLog) against exact counts, and the exact AUC and log-loss against naive
// definitions.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "data/ctr/hyperloglog.h"
#include "data/ctr/synthetic_ctr.h"

namespace pstrain::data::ctr {
namespace {

TEST(HyperLogLog, EstimatesWithinFourStandardErrors) {
  for (const std::uint64_t distinct : {1ull, 100ull, 30000ull, 200000ull, 2000000ull}) {
    HyperLogLog estimator;
    for (std::uint64_t i = 0; i < distinct; ++i) {
      estimator.add(i * 7919);
      if (i % 3 == 0) estimator.add(i * 7919);  // repeats change nothing
    }
    const double error = std::abs(estimator.estimate() - static_cast<double>(distinct)) / static_cast<double>(distinct);
    EXPECT_LE(error, 4 * HyperLogLog::kRelativeError) << distinct << " ids, estimate " << estimator.estimate();
  }
}

TEST(HyperLogLog, MergedPartsEstimateTheWhole) {
  HyperLogLog whole, left, right;
  for (std::uint64_t i = 0; i < 50000; ++i) {
    whole.add(i);
    (i % 2 ? left : right).add(i);
  }
  left.merge(right);
  EXPECT_EQ(left.estimate(), whole.estimate());
}

// P(score of a positive > score of a negative) + half the ties, pair by pair.
double naive_auc(const std::vector<std::pair<double, int>>& scored) {
  double wins = 0, pairs = 0;
  for (const auto& [p, y] : scored) {
    if (y != 1) continue;
    for (const auto& [q, z] : scored) {
      if (z != 0) continue;
      pairs += 1;
      wins += p > q ? 1 : p == q ? 0.5 : 0;
    }
  }
  return wins / pairs;
}

TEST(ExactAuc, MatchesPairCountingWithTies) {
  std::mt19937_64 random(3);
  std::vector<std::pair<double, int>> scored;
  for (int i = 0; i < 600; ++i) scored.emplace_back(static_cast<double>(random() % 20) / 20, random() % 3 == 0);
  EXPECT_NEAR(exact_auc(scored), naive_auc(scored), 1e-12);
  EXPECT_EQ(exact_auc({{0.1, 0}, {0.9, 1}}), 1.0);
  EXPECT_EQ(exact_auc({{0.5, 0}, {0.5, 1}}), 0.5);
}

TEST(MeanLogloss, IsTheAverageNegativeLogLikelihood) {
  EXPECT_NEAR(mean_logloss({{0.8, 1}, {0.25, 0}}), -(std::log(0.8) + std::log(0.75)) / 2, 1e-12);
}

}  // namespace
}  // namespace pstrain::data::ctr
