#pragma once
// The sweep's leaderboard, read from every set's runs/set-NNNN/metrics.jsonl.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sweep/sets.h"

namespace pstrain::sweep {

enum class RankBy { kBest, kFinal };  // best test_accuracy over the passes, or the last pass's

struct SetResult {
  int id = 0;
  Flags flags;
  std::string status;  // "complete", "incomplete" (fewer passes than asked, or still running), "not run"
  int passes_done = 0;
  int passes_asked = 0;
  std::optional<double> best_test_accuracy;
  int best_pass = -1;
  std::optional<double> final_test_accuracy;
  std::optional<double> final_test_loss;
  std::optional<double> elapsed_s;
  int unreadable_lines = 0;

  std::optional<double> score(RankBy by) const {
    return by == RankBy::kBest ? best_test_accuracy : final_test_accuracy;
  }
};

struct Report {
  RankBy by = RankBy::kBest;
  std::vector<SetResult> ranked;  // best first; sets without a score last, in set order
};

// Reads one metrics.jsonl (absent file: a set that has not run).
SetResult read_set_result(const std::filesystem::path& sweep_dir, const HyperparameterSet& set);
Report build_report(const std::filesystem::path& sweep_dir, const std::vector<HyperparameterSet>& sets, RankBy by);

std::string format_leaderboard(const Report& report, std::size_t top);  // the table and the best set's flags
std::string report_csv(const Report& report);
std::string report_json(const Report& report);
// SWEEP_DIR/report.csv and report.json, each written atomically.
void write_report_files(const std::filesystem::path& sweep_dir, const Report& report);

}  // namespace pstrain::sweep
