#pragma once
// What a run reached, read back from its metrics.jsonl: the best and the final test metric. The end-of-run line
// of pstrain and the leaderboard of pstrain-sweep both read it here. The metric is test accuracy (higher is
// better), or test perplexity (lower is better) where a run logs it (language models); pass records only, the
// evaluation records of --eval-every-steps (report/metrics.h) are skipped.
#include <filesystem>
#include <optional>
#include <string>

namespace pstrain::report {

struct RunSummary {
  int passes_done = 0;       // lines with the metric
  int unreadable_lines = 0;  // torn or foreign lines, skipped
  std::string metric = "test_accuracy";
  std::optional<double> best;  // best value of `metric` over the passes
  int best_pass = -1;
  std::optional<double> final_value;  // the last line's
  std::optional<double> final_test_loss;
  std::optional<double> elapsed_s;
};

// nullopt when the file does not exist (a run that has not finished a pass).
std::optional<RunSummary> summarize_metrics(const std::filesystem::path& metrics_jsonl);

// "training finished: 10 passes in 5m12s, test accuracy best 0.8712 (pass 8), final 0.87; outputs in OUT
// (metrics.jsonl, pass folders, tensorboard/; curves: pstrain-plot OUT)".
std::string summary_line(const std::optional<RunSummary>& summary, double total_seconds,
                         const std::filesystem::path& output_dir);

}  // namespace pstrain::report
