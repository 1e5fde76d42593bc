// pstrain evaluate PASS_FOLDER: a saved model's figures on its data's test (or validation) split, without
// training, on this process.
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "compute/backend.h"
#include "core/error.h"
#include "core/files.h"
#include "inference/command_line.h"
#include "inference/commands.h"
#include "inference/evaluation.h"
#include "nn/graph_model.h"

namespace pstrain::inference {

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

constexpr const char* kUsage =
    "usage: pstrain evaluate PASS_FOLDER [--data-dir DIR] [--split test|valid] [--output FILE.json]\n"
    "Scores a pass folder's model on a data folder's test shard (or validation shard) without training: loss,\n"
    "accuracy, and per-class accuracy and the confusion matrix for classifiers, perplexity for language models.\n"
    "The pass folder names its model and data (model.txt, model.ini); older ones need --model or --model-file.";

po::options_description evaluate_options() {
  po::options_description flags("options");
  // clang-format off
  flags.add_options()
      ("help,h", "print this help and exit")
      ("model-from", po::value<std::string>()->value_name("PASS"), "the pass folder (or give it as the argument)")
      ("data-dir", po::value<std::string>()->value_name("DIR"), "the data folder (default: the one the run trained on)")
      ("split", po::value<std::string>()->value_name("NAME")->default_value("test"), "test | valid (token folders with valid.h5)")
      ("batch-size", po::value<long long>()->value_name("N"), "samples per forward pass (default 256)")
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
    const fs::path valid = data_dir / data::kValidShardFileName;
    if (!fs::exists(valid)) throw Error(ExitCode::kInputData, cat(data_dir.string(), " has no ", valid.filename()));
    return valid;
  }
  throw Error(ExitCode::kUsage, cat("--split '", split, "' is not one of test, valid"));
}

// Tells when the data are not those the run was scored on (a fingerprint of another test shard).
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

}  // namespace

int run_evaluate(int argc, char** argv) {
  const po::options_description flags = evaluate_options();
  const auto values = parse_command(argc, argv, kUsage, flags, "pass-folder");
  if (!values) return 0;
  const fs::path pass_dir = pass_folder_argument(*values);
  check_pass_folder(pass_dir);
  const std::string split = (*values)["split"].as<std::string>();
  const fs::path file = split_file(data_folder(*values, pass_dir), split);
  const fs::path output =
      values->count("output")
          ? fs::path((*values)["output"].as<std::string>())
          : pass_dir.parent_path() / cat("evaluation-", pass_dir.filename().string(), "-", split, ".json");
  check_new_output("--output", output);
  const data::ShardMeta meta = data::read_shard_meta(file);
  const SavedModel saved = load_saved_model(pass_dir, resolve_model_choice(*values), &meta);
  check_data_fits(saved, meta, file.string());
  note_other_data(saved, file);
  const data::Samples samples = data::read_shard(file);

  const std::size_t batch = positive_flag(*values, "batch-size", 256);
  const auto backend = compute::make_cpu_backend();
  const auto model = nn::make_graph_model(*backend, saved.plan, batch);
  model->set_parameters(saved.parameters);
  if (!saved.state.empty()) model->set_state(saved.state);
  const Evaluation evaluation = evaluate_samples(*model, samples, batch, saved.info.tokens);
  write_file_atomically(output, evaluation_json(evaluation, pass_dir.string(), file.string()));
  std::cout << "pstrain evaluate: " << pass_dir.string() << " on " << file.string() << "\n"
            << evaluation_text(evaluation) << "written: " << output.string() << std::endl;
  return 0;
}

}  // namespace pstrain::inference
