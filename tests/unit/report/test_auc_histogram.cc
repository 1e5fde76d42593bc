// The histogram AUC against the exact one (ctr_metrics.h): within the bound it states, on coarse and fine
// histograms of informative random predictions; the bound itself against its closed form; merging as summing.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/error.h"
#include "report/auc_histogram.h"
#include "report/ctr_metrics.h"

namespace pstrain::report {
namespace {

struct Samples {
  std::vector<float> logits;
  std::vector<std::int32_t> labels;
};

// Clicks score one standard deviation higher: an AUC near 0.76.
Samples informative_samples(std::size_t count, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Samples samples;
  for (std::size_t i = 0; i < count; ++i) {
    const std::int32_t label = engine() % 4 == 0 ? 1 : 0;
    samples.labels.push_back(label);
    samples.logits.push_back(normal(engine) + static_cast<float>(label));
  }
  return samples;
}

TEST(AucHistogramTest, StaysWithinItsStatedBoundOfTheExactAuc) {
  const Samples samples = informative_samples(20000, 3);
  PredictionRun run;
  run.add(samples.logits, samples.labels);
  const double exact = exact_auc(run.sorted());
  for (const std::size_t bins : {4, 64, 65536}) {
    AucHistogram histogram(bins);
    histogram.add(samples.logits, samples.labels);
    EXPECT_LE(std::abs(histogram.auc() - exact), histogram.error_bound()) << bins << " bins";
    if (bins == 4) {
      EXPECT_GT(std::abs(histogram.auc() - exact), 1e-3);  // coarse bins really do cost accuracy
    }
    if (bins == 65536) {
      EXPECT_LT(histogram.error_bound(), 1e-3);
    }
  }
}

TEST(AucHistogramTest, OneBinIsAllTiesWithTheWidestBound) {
  AucHistogram histogram(1);
  histogram.add(std::vector<float>{-3, 0, 2, 5}, std::vector<std::int32_t>{0, 1, 0, 1});
  EXPECT_EQ(histogram.auc(), 0.5);
  EXPECT_EQ(histogram.error_bound(), 0.5);  // every pair tied: 4 / (2 * 2 * 2)
}

TEST(AucHistogramTest, MergingSumsCountsAndGivesTheSameAucAsOneHistogram) {
  const Samples samples = informative_samples(3000, 5);
  AucHistogram whole(256);
  whole.add(samples.logits, samples.labels);
  AucHistogram first(256);
  AucHistogram second(256);
  const std::size_t half = 1234;
  first.add(std::span(samples.logits).first(half), std::span(samples.labels).first(half));
  second.add(std::span(samples.logits).subspan(half), std::span(samples.labels).subspan(half));
  second.merge(first);
  EXPECT_TRUE(std::equal(second.counts().begin(), second.counts().end(), whole.counts().begin()));
  EXPECT_EQ(second.auc(), whole.auc());
  EXPECT_THROW(second.merge(AucHistogram(128)), Error);
}

TEST(AucHistogramTest, BadLabelsAreInputDataErrors) {
  AucHistogram histogram(8);
  try {
    histogram.add(std::vector<float>{0.5f}, std::vector<std::int32_t>{-1});
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kInputData);
  }
}

}  // namespace
}  // namespace pstrain::report
