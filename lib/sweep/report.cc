#include "sweep/report.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "core/error.h"
#include "core/files.h"
#include "report/json_line.h"
#include "report/run_summary.h"
#include "sweep/runner.h"

namespace fs = std::filesystem;

namespace pstrain::sweep {

namespace {

std::string number(const std::optional<double>& value) {
  if (!value) return "";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.9g", *value);
  return buffer;
}

report::OrderedJson json_number(const std::optional<double>& value) {
  return value ? report::OrderedJson(*value) : report::OrderedJson(nullptr);
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

// Every flag any set has, in first-seen order: one CSV column each, so the file sorts and plots directly.
std::vector<std::string> flag_columns(const Report& report) {
  std::vector<std::string> columns;
  for (const auto& result : report.ranked) {
    for (const auto& [flag, value] : result.flags) {
      if (std::find(columns.begin(), columns.end(), flag) == columns.end()) columns.push_back(flag);
    }
  }
  return columns;
}

std::string value_of(const Flags& flags, const std::string& flag) {
  for (const auto& [name, value] : flags) {
    if (name == flag) return value;
  }
  return "";
}

const char* metric_name(RankBy by) {
  return by == RankBy::kBest ? "best_test_accuracy" : "final_test_accuracy";
}

}  // namespace

SetResult read_set_result(const fs::path& sweep_dir, const HyperparameterSet& set) {
  SetResult result;
  result.id = set.id;
  result.flags = set.flags;
  result.passes_asked = passes_of(set.flags);
  // The same reading as pstrain's own end-of-run line (report/run_summary.h).
  const auto summary = report::summarize_metrics(run_dir(sweep_dir, set.id) / "metrics.jsonl");
  if (!summary) {
    result.status = "not run";
    return result;
  }
  result.passes_done = summary->passes_done;
  result.unreadable_lines = summary->unreadable_lines;
  result.best_test_accuracy = summary->best;
  result.best_pass = summary->best_pass;
  result.final_test_accuracy = summary->final_value;
  result.final_test_loss = summary->final_test_loss;
  result.elapsed_s = summary->elapsed_s;
  result.status = set_complete(sweep_dir, set) ? "complete" : result.passes_done > 0 ? "incomplete" : "not run";
  return result;
}

Report build_report(const fs::path& sweep_dir, const std::vector<HyperparameterSet>& sets, RankBy by) {
  Report report;
  report.by = by;
  for (const auto& set : sets) report.ranked.push_back(read_set_result(sweep_dir, set));
  std::stable_sort(report.ranked.begin(), report.ranked.end(), [by](const SetResult& a, const SetResult& b) {
    const auto sa = a.score(by), sb = b.score(by);
    if (sa && sb) return *sa > *sb;  // ties keep set order (stable)
    return sa.has_value() && !sb.has_value();
  });
  return report;
}

std::string format_leaderboard(const Report& report, std::size_t top) {
  std::ostringstream out;
  out << std::left << std::setw(5) << "rank" << std::setw(10) << "set" << std::setw(12) << "status" << std::setw(8)
      << "passes" << std::setw(16) << "best_acc(pass)" << std::setw(11) << "final_acc" << std::setw(12) << "final_loss"
      << "flags\n";
  std::size_t rank = 0;
  for (const auto& result : report.ranked) {
    if (rank++ >= top) break;
    const std::string best =
        result.best_test_accuracy ? cat(number(result.best_test_accuracy), " (", result.best_pass, ")") : "-";
    out << std::setw(5) << rank << std::setw(10) << set_name(result.id) << std::setw(12) << result.status
        << std::setw(8) << cat(result.passes_done, "/", result.passes_asked) << std::setw(16) << best << std::setw(11)
        << (result.final_test_accuracy ? number(result.final_test_accuracy) : "-") << std::setw(12)
        << (result.final_test_loss ? number(result.final_test_loss) : "-") << flags_to_shell(result.flags) << "\n";
  }
  if (report.ranked.empty() || !report.ranked.front().score(report.by)) {
    out << "no set has metrics yet\n";
  } else {
    const auto& best = report.ranked.front();
    out << "best: " << set_name(best.id) << " " << metric_name(report.by) << " " << number(best.score(report.by))
        << ": " << flags_to_shell(best.flags) << "\n";
  }
  return out.str();
}

std::string report_csv(const Report& report) {
  const auto columns = flag_columns(report);
  std::string out =
      "rank,set,status,passes_done,passes_asked,best_test_accuracy,best_pass,final_test_accuracy,"
      "final_test_loss,elapsed_s,flags";
  for (const auto& column : columns) {
    out += ',';
    out += csv_field(column);
  }
  out += "\n";
  int rank = 0;
  for (const auto& r : report.ranked) {
    out += cat(++rank, ",", r.id, ",", r.status, ",", r.passes_done, ",", r.passes_asked, ",",
               number(r.best_test_accuracy), ",", r.best_test_accuracy ? std::to_string(r.best_pass) : "", ",",
               number(r.final_test_accuracy), ",", number(r.final_test_loss), ",", number(r.elapsed_s), ",",
               csv_field(flags_to_shell(r.flags)));
    for (const auto& column : columns) {
      out += ',';
      out += csv_field(value_of(r.flags, column));
    }
    out += "\n";
  }
  return out;
}

// One set per line (report/json_line.h), so that the file reads as a table and diffs line by line.
std::string report_json(const Report& report) {
  const bool has_best = !report.ranked.empty() && report.ranked.front().score(report.by);
  std::string out =
      cat("{\n  \"ranked_by\": ", report::json_quoted(metric_name(report.by)),
          ",\n  \"best_set\": ", has_best ? std::to_string(report.ranked.front().id) : "null", ",\n  \"sets\": [");
  int rank = 0;
  for (const auto& r : report.ranked) {
    report::OrderedJson flags = report::OrderedJson::object();
    for (const auto& [flag, value] : r.flags) flags[flag] = value;
    report::OrderedJson set = report::OrderedJson::object();
    set["rank"] = rank + 1;
    set["set"] = r.id;
    set["name"] = set_name(r.id);
    set["status"] = r.status;
    set["passes_done"] = r.passes_done;
    set["passes_asked"] = r.passes_asked;
    set["best_test_accuracy"] = json_number(r.best_test_accuracy);
    set["best_pass"] = r.best_test_accuracy ? report::OrderedJson(r.best_pass) : report::OrderedJson(nullptr);
    set["final_test_accuracy"] = json_number(r.final_test_accuracy);
    set["final_test_loss"] = json_number(r.final_test_loss);
    set["elapsed_s"] = json_number(r.elapsed_s);
    set["flags"] = flags;
    out += cat(rank ? "," : "", "\n    ", report::json_line(set));
    ++rank;
  }
  return out + "\n  ]\n}\n";
}

void write_report_files(const fs::path& sweep_dir, const Report& report) {
  write_file_atomically(sweep_dir / "report.csv", report_csv(report));
  write_file_atomically(sweep_dir / "report.json", report_json(report));
}

}  // namespace pstrain::sweep
