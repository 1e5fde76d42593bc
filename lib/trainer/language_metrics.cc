#include "trainer/language_metrics.h"

#include <cmath>
#include <fstream>
#include <system_error>

#include "checkpoint/pass_folder.h"
#include "core/error.h"
#include "core/log.h"
#include "report/json_line.h"

namespace pstrain::trainer {

namespace fs = std::filesystem;

bool is_language_model(const run_common::DataPlan& data) {
  return data.meta.tokens.has_value();
}

void add_perplexities(report::JsonLine& line, double train_loss, std::optional<double> valid_loss, double test_loss) {
  line.add("train_perplexity", std::exp(train_loss));
  if (valid_loss) line.add("valid_perplexity", std::exp(*valid_loss));
  line.add("test_perplexity", std::exp(test_loss));
}

namespace {

// The lowest valid_perplexity of the passes before `pass` in metrics.jsonl (none: no such pass yet).
std::optional<double> best_earlier(const fs::path& metrics, int pass) {
  std::ifstream in(metrics);
  std::optional<double> best;
  std::string text;
  while (std::getline(in, text)) {
    const auto object = report::parse_json_object(text);
    if (!object) continue;
    const auto line_pass = report::number_field(*object, "pass");
    const auto perplexity = report::number_field(*object, "valid_perplexity");
    if (!line_pass || !perplexity || *line_pass >= pass) continue;
    if (!best || *perplexity < *best) best = *perplexity;
  }
  return best;
}

}  // namespace

bool keep_best_valid(const fs::path& output, int pass, double valid_loss) {
  const double perplexity = std::exp(valid_loss);
  const std::optional<double> best = best_earlier(output / "metrics.jsonl", pass);
  if (best && !(perplexity < *best)) return false;
  // A new link beside the old one, renamed over it: a reader sees the old or the new pass, never none.
  const fs::path link = output / "best-valid";
  const fs::path fresh = output / ".best-valid.tmp";
  std::error_code error;
  fs::remove(fresh, error);
  fs::create_directory_symlink(checkpoint::pass_folder_name(pass), fresh, error);
  if (!error) fs::rename(fresh, link, error);
  if (error) {
    throw Error(ExitCode::kOutput,
                cat("cannot point ", link.string(), " at ", checkpoint::pass_folder_name(pass), ": ", error.message()));
  }
  log_info("best validation perplexity so far: ", perplexity, " (pass ", pass, "; ", link.string(), ")");
  return true;
}

}  // namespace pstrain::trainer
