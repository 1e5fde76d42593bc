// Click-through-rate metrics: the exact AUC against a naive O(n^2) count of ranked pairs (ties counted half) on
// random data full of ties, its closed-form cases, the bit-identical result however the samples are split into
// merged runs, and logloss, NE and calibration against their definitions.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "core/error.h"
#include "report/ctr_metrics.h"

namespace pstrain::report {
namespace {

struct Samples {
  std::vector<float> logits;
  std::vector<std::int32_t> labels;
};

// Logits from a handful of values (many ties), labels correlated with them so that the AUC is far from 0.5.
Samples random_samples(std::size_t count, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  Samples samples;
  for (std::size_t i = 0; i < count; ++i) {
    const float logit = static_cast<float>(static_cast<int>(engine() % 9) - 4) * 0.5f;
    samples.logits.push_back(logit);
    samples.labels.push_back(static_cast<int>(engine() % 10) < 5 + static_cast<int>(logit) ? 1 : 0);
  }
  return samples;
}

double naive_auc(const Samples& samples) {
  double right = 0;
  double pairs = 0;
  for (std::size_t i = 0; i < samples.logits.size(); ++i) {
    for (std::size_t j = 0; j < samples.logits.size(); ++j) {
      if (samples.labels[i] != 1 || samples.labels[j] != 0) continue;
      pairs += 1;
      if (samples.logits[i] > samples.logits[j]) right += 1;
      if (samples.logits[i] == samples.logits[j]) right += 0.5;
    }
  }
  return right / pairs;
}

double auc_of(const std::vector<float>& logits, const std::vector<std::int32_t>& labels) {
  PredictionRun run;
  run.add(logits, labels);
  return exact_auc(run.sorted());
}

TEST(CtrMetricsTest, ExactAucEqualsTheNaivePairCountOnRandomDataWithTies) {
  for (const std::uint64_t seed : {1, 2, 3}) {
    const Samples samples = random_samples(700, seed);
    const double expected = naive_auc(samples);
    EXPECT_NEAR(auc_of(samples.logits, samples.labels), expected, 1e-12) << "seed " << seed;
    EXPECT_GT(std::abs(expected - 0.5), 0.05);  // the data are informative: a constant 0.5 would fail
  }
}

TEST(CtrMetricsTest, ClosedFormAucs) {
  EXPECT_EQ(auc_of({-2, -1, 0.5f, 3}, {0, 0, 1, 1}), 1.0);                  // perfect ranking
  EXPECT_EQ(auc_of({-2, -1, 0.5f, 3}, {1, 1, 0, 0}), 0.0);                  // reversed
  EXPECT_EQ(auc_of({0.7f, 0.7f, 0.7f, 0.7f, 0.7f}, {1, 0, 0, 1, 0}), 0.5);  // all tied
  EXPECT_EQ(auc_of({-0.0f, 0.0f}, {1, 0}), 0.5);                            // -0 ties +0
  EXPECT_EQ(auc_of({1, 2, 2, 3}, {0, 1, 0, 1}), 0.875);                     // 3.5 of 4 pairs
  EXPECT_TRUE(std::isnan(auc_of({1, 2}, {1, 1})));                          // no non-click: undefined
}

TEST(CtrMetricsTest, MergedRunsGiveBitIdenticalMetricsHoweverTheSamplesAreSplit) {
  const Samples samples = random_samples(5000, 7);
  PredictionRun whole;
  whole.add(samples.logits, samples.labels);
  const std::vector<Prediction> whole_run(whole.sorted().begin(), whole.sorted().end());
  const CtrMetrics reference = ctr_metrics(whole_run, 0.4);
  std::mt19937_64 engine(9);
  for (const std::size_t ranks : {2, 3, 7, 16}) {
    std::vector<PredictionRun> parts(ranks);
    for (std::size_t i = 0; i < samples.logits.size(); ++i) {
      const std::size_t rank = engine() % ranks;  // uneven, interleaved shards
      parts[rank].add(std::span(&samples.logits[i], 1), std::span(&samples.labels[i], 1));
    }
    PredictionRun merged;  // as a root rank would: its own run, then the others' in rank order
    for (std::size_t rank = ranks; rank-- > 0;) merged.merge(parts[rank].sorted());
    const auto run = merged.sorted();
    ASSERT_EQ(run.size(), whole_run.size());
    EXPECT_EQ(std::memcmp(run.data(), whole_run.data(), run.size_bytes()), 0) << ranks << " ranks";
    const CtrMetrics metrics = ctr_metrics(run, 0.4);
    EXPECT_EQ(std::memcmp(&metrics, &reference, sizeof metrics), 0) << ranks << " ranks";
  }
}

// What rank 0 does with the gathered runs (inference/evaluation_ranks.h gather_predictions): runs laid end to end,
// some empty (a server, an evaluator without a batch), the same values in several runs (ties across ranks), merged
// into the very run of all the samples, in any order of the runs.
TEST(CtrMetricsTest, RunsLaidEndToEndMergeIntoTheWholeRunWithTiesAndEmptyRuns) {
  const Samples samples = random_samples(3000, 11);  // 9 distinct logits: every run shares ties with the others
  PredictionRun whole;
  whole.add(samples.logits, samples.labels);
  const std::vector<Prediction> whole_run(whole.sorted().begin(), whole.sorted().end());
  std::mt19937_64 engine(13);
  for (const std::size_t ranks : {1, 2, 3, 5, 8}) {
    std::vector<PredictionRun> parts(ranks);
    for (std::size_t i = 0; i < samples.logits.size(); ++i) {
      const std::size_t rank = ranks == 1 ? 0 : 1 + engine() % (ranks - 1);  // rank 0 holds none (a server)
      parts[rank].add(std::span(&samples.logits[i], 1), std::span(&samples.labels[i], 1));
    }
    std::vector<Prediction> laid;
    std::vector<std::uint64_t> lengths;
    for (PredictionRun& part : parts) {
      laid.insert(laid.end(), part.sorted().begin(), part.sorted().end());
      lengths.push_back(part.size());
    }
    lengths.push_back(0);  // a last rank without predictions
    PredictionRun merged = PredictionRun::from_runs(std::move(laid), lengths);
    ASSERT_EQ(merged.size(), whole_run.size()) << ranks << " ranks";
    EXPECT_EQ(std::memcmp(merged.sorted().data(), whole_run.data(), merged.sorted().size_bytes()), 0)
        << ranks << " ranks";
  }
  EXPECT_EQ(PredictionRun::from_runs({}, std::vector<std::uint64_t>{0, 0, 0}).size(), 0u);  // no predictions at all
}

TEST(CtrMetricsTest, RunsThatAreNotSortedOrDoNotAddUpAreRefused) {
  const std::vector<Prediction> unsorted{{0.5f, 0}, {1.0f, 1}, {0.25f, 0}};
  EXPECT_THROW(PredictionRun::from_runs(unsorted, std::vector<std::uint64_t>{1, 2}), Error);  // run 1: 1.0, 0.25
  EXPECT_NO_THROW(PredictionRun::from_runs(unsorted, std::vector<std::uint64_t>{2, 1}));
  EXPECT_THROW(PredictionRun::from_runs(unsorted, std::vector<std::uint64_t>{2}), Error);  // 2 of 3
}

TEST(CtrMetricsTest, LoglossNeAndCalibrationFollowTheirDefinitions) {
  const Samples samples = random_samples(1000, 4);
  PredictionRun run;
  run.add(samples.logits, samples.labels);
  const CtrMetrics metrics = ctr_metrics(run.sorted(), 0.3);
  double loss = 0;
  double probability = 0;
  double clicks = 0;
  for (std::size_t i = 0; i < samples.logits.size(); ++i) {
    const double p = 1 / (1 + std::exp(-static_cast<double>(samples.logits[i])));
    loss -= samples.labels[i] == 1 ? std::log(p) : std::log(1 - p);
    probability += p;
    clicks += samples.labels[i];
  }
  const double n = static_cast<double>(samples.logits.size());
  EXPECT_NEAR(metrics.logloss, loss / n, 1e-12);
  EXPECT_NEAR(metrics.ne, (loss / n) / -(0.3 * std::log(0.3) + 0.7 * std::log(0.7)), 1e-12);
  EXPECT_NEAR(metrics.calibration, (probability / n) / (clicks / n), 1e-12);
  EXPECT_EQ(metrics.samples, samples.logits.size());
  EXPECT_EQ(metrics.clicks, static_cast<std::size_t>(clicks));
}

TEST(CtrMetricsTest, PredictingTheClickRateForEveryoneHasNeOneAndCalibrationOne) {
  // 1 click in 4, everyone predicted p = 1/4 (logit log(1/3)): logloss is the entropy of p, NE 1.
  const auto logit = static_cast<float>(std::log(1.0 / 3.0));
  PredictionRun run;
  run.add(std::vector<float>(8, logit), std::vector<std::int32_t>{0, 1, 0, 0, 0, 0, 1, 0});
  const CtrMetrics metrics = ctr_metrics(run.sorted(), 0.25);
  EXPECT_NEAR(metrics.ne, 1.0, 1e-7);  // the float logit is p to ~1e-8
  EXPECT_NEAR(metrics.calibration, 1.0, 1e-7);
  EXPECT_EQ(metrics.auc, 0.5);
}

TEST(CtrMetricsTest, MetricsLineUsesTheTestNamesAndNullForUndefined) {
  JsonLine line;
  add_ctr_metrics(line, {.auc = 0.75, .logloss = 0.5, .ne = std::nan(""), .calibration = 1.25});
  EXPECT_EQ(line.str(), R"({"test_auc": 0.75, "test_logloss": 0.5, "test_ne": null, "test_calibration": 1.25})");
}

TEST(CtrMetricsTest, BadLabelsAndNanPredictionsAreNamed) {
  PredictionRun run;
  try {
    run.add(std::vector<float>{0.5f, 1.0f}, std::vector<std::int32_t>{0, 3});
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kInputData);
    EXPECT_NE(std::string(error.what()).find("label 3"), std::string::npos) << error.what();
  }
  EXPECT_THROW(run.add(std::vector<float>{std::nanf("")}, std::vector<std::int32_t>{1}), Error);
}

}  // namespace
}  // namespace pstrain::report
