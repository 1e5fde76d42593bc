#include "inference/command_line.h"

#include <cstdlib>
#include <iostream>
#include <sstream>

#include "core/error.h"
#include "core/parse_number.h"

namespace pstrain::inference {

namespace po = boost::program_options;

namespace {

std::vector<std::size_t> widths(const std::string& flag, const std::string& text) {
  std::vector<std::size_t> values;
  if (text == "none" || text.empty()) return values;
  std::istringstream parts(text);
  for (std::string part; std::getline(parts, part, ',');) {
    const std::optional<std::size_t> value = parse_number<std::size_t>(part);
    if (!value || *value == 0) {
      throw Error(ExitCode::kUsage, cat("--", flag, " '", text, "': expected positive integers separated by commas"));
    }
    values.push_back(*value);
  }
  return values;
}

}  // namespace

po::options_description model_choice_options() {
  po::options_description flags("the model of a pass folder that does not name it (written before model.ini)");
  // clang-format off
  flags.add_options()
      ("model", po::value<std::string>()->value_name("NAME"), "the preset the run trained: mlp | cnn | resnet | nplm")
      ("model-file", po::value<std::string>()->value_name("FILE"), "the model file the run trained")
      ("hidden", po::value<std::string>()->value_name("W,W"), "as the run's --hidden (none for no hidden layer)")
      ("conv-filters", po::value<std::string>()->value_name("F,F"), "as the run's --conv-filters (cnn)")
      ("kernel-size", po::value<std::size_t>()->value_name("K"), "as the run's --kernel-size (cnn)")
      ("activation", po::value<std::string>()->value_name("NAME"), "as the run's --activation: relu | tanh | sigmoid")
      ("width", po::value<double>()->value_name("X"), "as the run's --width (resnet)")
      ("batch-norm", po::value<bool>()->value_name("BOOL"), "as the run's --batch-norm (resnet)")
      ("embedding-dim", po::value<std::size_t>()->value_name("M"), "as the run's --embedding-dim (nplm)")
      ("direct", po::value<bool>()->value_name("BOOL"), "as the run's --direct (nplm)");
  // clang-format on
  return flags;
}

ModelChoice resolve_model_choice(const po::variables_map& values) {
  ModelChoice choice;
  if (values.count("model-file")) choice.model_file = values["model-file"].as<std::string>();
  if (!values.count("model")) return choice;
  if (choice.model_file) throw Error(ExitCode::kUsage, "give --model or --model-file, not both");
  nn::PresetOptions options;
  options.name = values["model"].as<std::string>();
  if (options.name == "nplm") options.hidden = {100};  // the trainer's default for nplm (train_config.h)
  if (values.count("hidden")) options.hidden = widths("hidden", values["hidden"].as<std::string>());
  if (values.count("conv-filters"))
    options.conv_filters = widths("conv-filters", values["conv-filters"].as<std::string>());
  if (values.count("kernel-size")) options.kernel_size = values["kernel-size"].as<std::size_t>();
  if (values.count("activation")) {
    const std::string name = values["activation"].as<std::string>();
    if (name == "relu")
      options.activation = compute::Activation::kRelu;
    else if (name == "tanh")
      options.activation = compute::Activation::kTanh;
    else if (name == "sigmoid")
      options.activation = compute::Activation::kSigmoid;
    else
      throw Error(ExitCode::kUsage, cat("--activation '", name, "' is not one of relu, tanh, sigmoid"));
  }
  if (values.count("width")) options.width = values["width"].as<double>();
  if (values.count("batch-norm")) options.batch_norm = values["batch-norm"].as<bool>();
  if (values.count("embedding-dim")) options.embedding_dim = values["embedding-dim"].as<std::size_t>();
  if (values.count("direct")) options.direct = values["direct"].as<bool>();
  choice.preset = options;
  return choice;
}

namespace {

// The ranks the launcher started, where its environment says (mpirun does; srun --mpi=pmix does not): else 0.
int launched_ranks() {
  for (const char* size : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    const char* value = std::getenv(size);
    if (value != nullptr) return std::atoi(value);
  }
  return 0;
}

}  // namespace

bool started_by_mpi_launcher() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

std::optional<po::variables_map> parse_command(int argc, char** argv, const std::string& usage,
                                               const po::options_description& flags, const char* positional,
                                               CommandRanks ranks) {
  // One process does the whole job: started by mpirun with several ranks, each would write the same output.
  if (const int launched = launched_ranks(); !ranks.several && launched > 1) {
    throw Error(ExitCode::kUsage, cat("pstrain ", argv[0], " runs on one process; it was started as ", launched,
                                      " ranks (run it without mpirun, or with -np 1)"));
  }
  po::options_description all;
  all.add(flags);
  po::options_description hidden;
  po::positional_options_description positions;
  if (positional != nullptr) {
    hidden.add_options()(positional, po::value<std::string>());
    positions.add(positional, 1);
    all.add(hidden);
  }
  po::variables_map values;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(positions).run(), values);
    po::notify(values);
  } catch (const po::error& error) {
    throw Error(ExitCode::kUsage, cat(error.what(), " (see pstrain ", argv[0], " --help)"));
  }
  if (values.count("help")) {
    if (ranks.print_help) std::cout << usage << "\n" << flags;
    return std::nullopt;
  }
  return values;
}

void check_new_output(const std::string& flag, const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (fs::exists(fs::symlink_status(path, error))) {
    throw Error(ExitCode::kOutput, cat(flag, " ", path.string(), " already exists; pstrain never replaces a file"));
  }
  const fs::path folder = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  if (!fs::is_directory(folder, error)) {
    throw Error(ExitCode::kOutput, cat(flag, " ", path.string(), ": the folder ", folder.string(), " does not exist"));
  }
}

std::size_t positive_flag(const po::variables_map& values, const std::string& name, std::size_t fallback) {
  if (!values.count(name)) return fallback;
  const long long value = values[name].as<long long>();
  if (value <= 0) throw Error(ExitCode::kUsage, cat("--", name, " must be > 0 (got ", value, ")"));
  return static_cast<std::size_t>(value);
}

}  // namespace pstrain::inference
