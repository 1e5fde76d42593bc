#include "report/run_summary.h"

#include <cstdio>
#include <fstream>

#include "report/json_line.h"
#include "report/metrics.h"
#include "report/progress_line.h"

namespace pstrain::report {

namespace {

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

}  // namespace

std::optional<RunSummary> summarize_metrics(const std::filesystem::path& metrics_jsonl) {
  std::ifstream in(metrics_jsonl);
  if (!in) return std::nullopt;
  RunSummary summary;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto object = parse_json_object(line);
    // Evaluation records (--eval-every-steps) sit between the passes: the summary is of the passes.
    if (object && metrics_record_kind(*object) == MetricsRecord::kEvaluation) continue;
    if (object && summary.passes_done == 0 && number_field(*object, "test_perplexity")) {
      summary.metric = "test_perplexity";
    }
    const auto value = object ? number_field(*object, summary.metric) : std::nullopt;
    if (!value) {
      ++summary.unreadable_lines;
      continue;
    }
    const auto pass = number_field(*object, "pass");
    ++summary.passes_done;
    const bool lower_is_better = summary.metric == "test_perplexity";
    if (!summary.best || (lower_is_better ? *value < *summary.best : *value > *summary.best)) {
      summary.best = value;
      summary.best_pass = pass ? static_cast<int>(*pass) : summary.passes_done - 1;
    }
    summary.final_value = value;
    summary.final_test_loss = number_field(*object, "test_loss");
    summary.elapsed_s = number_field(*object, "elapsed_s");
  }
  return summary;
}

std::string summary_line(const std::optional<RunSummary>& summary, double total_seconds,
                         const std::filesystem::path& output_dir) {
  std::string line = "training finished";
  if (summary && summary->best) {
    const std::string metric = summary->metric == "test_perplexity" ? "test perplexity" : "test accuracy";
    line += ": " + std::to_string(summary->passes_done) + " pass(es) in " + format_duration(total_seconds) + ", " +
            metric + " best " + number(*summary->best) + " (pass " + std::to_string(summary->best_pass) + "), final " +
            number(*summary->final_value);
  } else {
    line += " in " + format_duration(total_seconds);
  }
  const std::string output = output_dir.string();
  return line + "; outputs in " + output + " (metrics.jsonl, pass folders, tensorboard/; curves: pstrain-plot " +
         output + ")";
}

}  // namespace pstrain::report
