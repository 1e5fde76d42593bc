#include "inference/evaluate_request.h"

#include <cstdio>
#include <iostream>

#include "core/error.h"
#include "core/files.h"
#include "inference/command_line.h"

namespace pstrain::inference {

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

constexpr const char* kUsage =
    "usage: pstrain evaluate PASS_FOLDER [--data-dir DIR] [--split test|valid] [--output FILE.json]\n"
    "       mpirun -np N pstrain evaluate PASS_FOLDER [--num-pservers S] [...]\n"
    "Scores a pass folder's model on a data folder's test shard (or validation shard) without training: loss,\n"
    "accuracy, and per-class accuracy and the confusion matrix for classifiers, perplexity for language models,\n"
    "AUC, log-loss, NE and calibration for click models (loss=bce).\n"
    "The pass folder names its model and data (model.txt, model.ini); older ones need --model or --model-file.\n"
    "Under mpirun every rank scores a part of the data and rank 0 writes the figures (one process's); with\n"
    "--num-pservers S, ranks 0..S-1 hold the model's row tables (embedding and embedding_bag tables) by rows and\n"
    "the others fetch the rows they use.";

po::options_description evaluate_options() {
  po::options_description flags("options");
  // clang-format off
  flags.add_options()
      ("help,h", "print this help and exit")
      ("model-from", po::value<std::string>()->value_name("PASS"), "the pass folder (or give it as the argument)")
      ("data-dir", po::value<std::string>()->value_name("DIR"), "the data folder (default: the one the run trained on)")
      ("split", po::value<std::string>()->value_name("NAME")->default_value("test"), "test | valid (token folders with valid.h5)")
      ("batch-size", po::value<long long>()->value_name("N"), "samples per forward pass (default 256)")
      ("num-pservers", po::value<int>()->value_name("S"), "under mpirun: ranks that hold the row tables (default 0: none)")
      ("output", po::value<std::string>()->value_name("FILE"), "the figures as JSON (default: evaluation-pass-NNNNN-SPLIT.json beside the pass folder)");
  // clang-format on
  flags.add(model_choice_options());
  return flags;
}

fs::path pass_folder_argument(const po::variables_map& values) {
  if (values.count("model-from") && values.count("pass-folder")) {
    throw Error(ExitCode::kUsage, "give the pass folder once: as the argument or as --model-from");
  }
  if (values.count("model-from")) return values["model-from"].as<std::string>();
  if (values.count("pass-folder")) return values["pass-folder"].as<std::string>();
  throw Error(ExitCode::kUsage, "missing PASS_FOLDER (see pstrain evaluate --help)");
}

fs::path data_folder(const po::variables_map& values, const fs::path& pass_dir) {
  if (values.count("data-dir")) return values["data-dir"].as<std::string>();
  if (const auto saved = checkpoint::read_pass_model(pass_dir); saved && !saved->info.data_dir.empty()) {
    return saved->info.data_dir;
  }
  throw Error(ExitCode::kUsage, cat(pass_dir.string(), " does not name its data folder; give --data-dir"));
}

fs::path split_file(const fs::path& data_dir, const std::string& split) {
  if (split == "test") return data::test_shard_path(data_dir);
  if (split == "valid") {
    fs::path valid = data_dir / data::kValidShardFileName;
    if (!fs::exists(valid)) throw Error(ExitCode::kInputData, cat(data_dir.string(), " has no ", valid.filename()));
    return valid;
  }
  throw Error(ExitCode::kUsage, cat("--split '", split, "' is not one of test, valid"));
}

int servers_flag(const po::variables_map& values, bool several_ranks) {
  if (!values.count("num-pservers")) return 0;
  const int servers = values["num-pservers"].as<int>();
  if (servers < 0) throw Error(ExitCode::kUsage, cat("--num-pservers must be >= 0 (got ", servers, ")"));
  if (servers > 0 && !several_ranks) {
    throw Error(ExitCode::kUsage, cat("--num-pservers ", servers, " needs at least ", servers + 1,
                                      " ranks (start pstrain evaluate with mpirun -np N, N > ", servers, ")"));
  }
  return servers;
}

}  // namespace

std::optional<EvaluateRequest> parse_evaluate_request(int argc, char** argv, bool several_ranks, bool print_help) {
  const po::options_description flags = evaluate_options();
  const auto values = parse_command(argc, argv, kUsage, flags, "pass-folder", {several_ranks, print_help});
  if (!values) return std::nullopt;
  EvaluateRequest request;
  request.pass_dir = pass_folder_argument(*values);
  check_pass_folder(request.pass_dir);
  request.split = (*values)["split"].as<std::string>();
  request.data_file = split_file(data_folder(*values, request.pass_dir), request.split);
  request.output = values->count("output")
                       ? fs::path((*values)["output"].as<std::string>())
                       : request.pass_dir.parent_path() /
                             cat("evaluation-", request.pass_dir.filename().string(), "-", request.split, ".json");
  request.batch = positive_flag(*values, "batch-size", 256);
  request.choice = resolve_model_choice(*values);
  request.servers = servers_flag(*values, several_ranks);
  return request;
}

void note_other_data(const SavedModel& model, const fs::path& file) {
  if (model.info.data_fingerprint.empty() || file.filename() != data::kTestShardFileName) return;
  char crc[16];
  std::snprintf(crc, sizeof crc, "%08x", data::shard_crc32(file));
  const std::string fingerprint = cat(file.filename().string(), ":", crc);
  if (fingerprint != model.info.data_fingerprint) {
    std::cerr << "pstrain evaluate: note: " << file.string() << " (" << fingerprint
              << ") is not the test shard the run was scored on (" << model.info.data_fingerprint << ")\n";
  }
}

void report_evaluation(const Evaluation& evaluation, const EvaluateRequest& request,
                       const std::optional<EvaluationRanks>& ranks) {
  write_file_atomically(request.output,
                        evaluation_json(evaluation, request.pass_dir.string(), request.data_file.string(), ranks));
  std::cout << "pstrain evaluate: " << request.pass_dir.string() << " on " << request.data_file.string();
  if (ranks && ranks->servers == 0) std::cout << " (on " << ranks->ranks << " ranks)";
  if (ranks && ranks->servers > 0) {
    std::cout << " (on " << ranks->ranks << " ranks: " << ranks->servers << " serving the row tables, "
              << ranks->ranks - ranks->servers << " evaluating)";
  }
  std::cout << "\n" << evaluation_text(evaluation) << "written: " << request.output.string() << std::endl;
}

}  // namespace pstrain::inference
