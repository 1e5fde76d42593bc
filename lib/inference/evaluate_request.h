#pragma once
// What `pstrain evaluate` was asked, from its command line, whether one process or several ranks run it
// (evaluate_command.cc, evaluate_on_ranks.cc), and how it reports.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

#include "inference/evaluation.h"
#include "inference/saved_model.h"

namespace pstrain::inference {

struct EvaluateRequest {
  std::filesystem::path pass_dir;
  std::string split;  // "test" or "valid"
  std::filesystem::path data_file;
  std::filesystem::path output;  // the JSON
  std::size_t batch = 256;
  ModelChoice choice;
  int servers = 0;  // --num-pservers: ranks that hold the row tables (evaluate_on_ranks.h)
};

// Parses argv (argv[0] is "evaluate") and checks the pass folder. Returns nullopt after --help (printed where
// `print_help`). `several_ranks`: started by an MPI launcher, which may have started several. Throws
// Error(kUsage) for bad flags, Error(kInputData) for a missing or damaged pass folder or data file.
std::optional<EvaluateRequest> parse_evaluate_request(int argc, char** argv, bool several_ranks,
                                                      bool print_help = true);

// A note on stderr when the data are not those the run was scored on (a fingerprint of another test shard).
void note_other_data(const SavedModel& model, const std::filesystem::path& file);

// Writes the JSON (under a temporary name, then renamed) and prints the figures.
void report_evaluation(const Evaluation& evaluation, const EvaluateRequest& request,
                       const std::optional<EvaluationRanks>& ranks = std::nullopt);

}  // namespace pstrain::inference
