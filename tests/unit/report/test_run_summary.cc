// metrics.jsonl read back (the run summary) and the end-of-run line; the JSON itself: test_json_line.cc.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "report/run_summary.h"

namespace pstrain::report {
namespace {

// A metrics.jsonl in a fresh file, removed afterwards.
class MetricsFile {
 public:
  explicit MetricsFile(const std::string& text)
      : path_(std::filesystem::temp_directory_path() /
              ("pstrain-run-summary-" + std::to_string(::getpid()) + "-" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".jsonl")) {
    std::ofstream(path_) << text;
  }
  ~MetricsFile() { std::filesystem::remove(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

TEST(RunSummary, BestAndFinalAccuracySkippingATornLine) {
  const MetricsFile file(
      "{\"pass\": 0, \"test_loss\": 0.9, \"test_accuracy\": 0.7, \"elapsed_s\": 1}\n"
      "{\"pass\": 1, \"test_loss\": 0.5, \"test_accuracy\": 0.9, \"elapsed_s\": 2}\n"
      "{\"pass\": 2, \"test_loss\": 0.6, \"test_accuracy\": 0.85, \"elapsed_s\": 3}\n"
      "{\"pass\": 3, \"test_lo");
  const auto summary = summarize_metrics(file.path());
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->metric, "test_accuracy");
  EXPECT_EQ(summary->passes_done, 3);
  EXPECT_EQ(summary->unreadable_lines, 1);
  EXPECT_DOUBLE_EQ(*summary->best, 0.9);
  EXPECT_EQ(summary->best_pass, 1);
  EXPECT_DOUBLE_EQ(*summary->final_value, 0.85);
  EXPECT_DOUBLE_EQ(*summary->final_test_loss, 0.6);
  EXPECT_DOUBLE_EQ(*summary->elapsed_s, 3.0);
  EXPECT_EQ(summary_line(summary, 312.4, "runs/a"),
            "training finished: 3 pass(es) in 5m12s, test accuracy best 0.9 (pass 1), final 0.85; outputs in runs/a "
            "(metrics.jsonl, pass folders, tensorboard/; curves: pstrain-plot runs/a)");
}

TEST(RunSummary, PerplexityWhereLoggedLowerIsBetter) {
  const MetricsFile file(
      "{\"pass\": 0, \"test_accuracy\": 0.2, \"test_perplexity\": 180.5}\n"
      "{\"pass\": 1, \"test_accuracy\": 0.3, \"test_perplexity\": 95.25}\n"
      "{\"pass\": 2, \"test_accuracy\": 0.4, \"test_perplexity\": 99}\n");
  const auto summary = summarize_metrics(file.path());
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->metric, "test_perplexity");
  EXPECT_DOUBLE_EQ(*summary->best, 95.25);
  EXPECT_EQ(summary->best_pass, 1);
  EXPECT_DOUBLE_EQ(*summary->final_value, 99.0);
  EXPECT_NE(summary_line(summary, 10, "o").find("test perplexity best 95.25 (pass 1), final 99"), std::string::npos);
}

// Evaluation records (--eval-every-steps) between the pass records are no passes: neither counted nor unreadable.
TEST(RunSummary, EvaluationRecordsBetweenPassesAreSkipped) {
  const MetricsFile file(
      "{\"kind\": \"eval\", \"step\": 5, \"in_pass\": 0, \"test_loss\": 0.2, \"test_accuracy\": 0.99}\n"
      "{\"pass\": 0, \"test_loss\": 0.9, \"test_accuracy\": 0.7, \"elapsed_s\": 1}\n"
      "{\"kind\": \"eval\", \"step\": 15, \"in_pass\": 1, \"test_loss\": 0.1, \"test_accuracy\": 0.98}\n"
      "{\"pass\": 1, \"test_loss\": 0.5, \"test_accuracy\": 0.8, \"elapsed_s\": 2}\n");
  const auto summary = summarize_metrics(file.path());
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->passes_done, 2);
  EXPECT_EQ(summary->unreadable_lines, 0);
  EXPECT_DOUBLE_EQ(*summary->best, 0.8);
  EXPECT_EQ(summary->best_pass, 1);
  EXPECT_DOUBLE_EQ(*summary->final_test_loss, 0.5);
}

TEST(RunSummary, NoMetricsFileYet) {
  EXPECT_FALSE(summarize_metrics("/nonexistent/metrics.jsonl"));
  EXPECT_EQ(summary_line(std::nullopt, 4, "o"),
            "training finished in 4s; outputs in o (metrics.jsonl, pass folders, tensorboard/; curves: "
            "pstrain-plot o)");
}

}  // namespace
}  // namespace pstrain::report
