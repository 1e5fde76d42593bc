// pstrain predict PASS_FOLDER --input FILE --output FILE: a saved model's outputs for the samples of a shard or a
// .npy array (prediction.h says what is written).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include "compute/backend.h"
#include "core/error.h"
#include "core/files.h"
#include "core/join_numbers.h"
#include "data/npy.h"
#include "inference/command_line.h"
#include "inference/commands.h"
#include "inference/npy_writer.h"
#include "inference/prediction.h"
#include "nn/graph_model.h"

namespace pstrain::inference {

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

constexpr const char* kUsage =
    "usage: pstrain predict PASS_FOLDER --input FILE --output FILE [--top-k K] [--batch-size N]\n"
    "Writes a pass folder's model's outputs for the samples of a shard (.h5, pstrain-data) or of a .npy array of\n"
    "samples ([samples, ...sample shape], channels-last images, or word ids for a language model): class\n"
    "probabilities as float32 [samples, classes] when FILE ends in .npy, else CSV lines with the top-K classes\n"
    "(and words, for a language model whose pass folder holds vocab.txt).";

po::options_description predict_options() {
  po::options_description flags("options");
  // clang-format off
  flags.add_options()
      ("help,h", "print this help and exit")
      ("model-from", po::value<std::string>()->value_name("PASS"), "the pass folder (or give it as the argument)")
      ("input", po::value<std::string>()->value_name("FILE"), "samples: a shard (.h5) or a .npy array")
      ("output", po::value<std::string>()->value_name("FILE"), "where the predictions go (.npy: probabilities; else CSV)")
      ("logits", "with a .npy --output: the logits rather than the probabilities")
      ("top-k", po::value<long long>()->value_name("K"), "CSV: the K most probable classes per sample (default 5)")
      ("batch-size", po::value<long long>()->value_name("N"), "samples per forward pass (default 256)");
  // clang-format on
  flags.add(model_choice_options());
  return flags;
}

// The samples of a .npy file (data/npy.h: uint8 images scaled to [0, 1] as in training, float32/64; word ids for a
// language model), checked against the model's sample shape ({h, w} and {h, w, 1} alike).
data::Samples read_npy_samples(const fs::path& path, const SavedModel& model) {
  const data::NpyArray array = data::read_npy(path);
  if (array.shape.empty()) throw Error(ExitCode::kInputData, cat(path.string(), " holds a scalar, not samples"));
  const std::vector<std::size_t> sample(array.shape.begin() + 1, array.shape.end());
  if (nn::model_input_shape(sample) != model.plan.input) {
    throw Error(ExitCode::kInputData,
                cat(path.string(), " holds samples of shape ", join_numbers(sample, "x"), "; the model of ",
                    model.pass_dir.string(), " reads samples of shape ", join_numbers(model.plan.input, "x")));
  }
  data::Samples samples;
  samples.meta.sample_shape.assign(sample.begin(), sample.end());
  samples.meta.sample_count = array.shape[0];
  samples.features = model.info.tokens ? data::npy_word_ids(array, model.info.vocab_size, path.string())
                                       : data::npy_features(array, path.string());
  samples.labels.assign(array.shape[0], -1);
  return samples;
}

data::Samples read_samples(const fs::path& path, const SavedModel& model) {
  if (path.extension() == ".npy" && model.plan.categorical_fields > 0) {
    throw Error(ExitCode::kUsage, cat("the model of ", model.pass_dir.string(),
                                      " reads categorical fields (bags of ids), "
                                      "which a .npy cannot hold: give a CTR shard (pstrain-data criteo | movielens)"));
  }
  if (path.extension() == ".npy") return read_npy_samples(path, model);
  const data::ShardMeta meta = data::read_shard_meta(path);
  check_data_fits(model, meta, path.string());
  return data::read_shard(path);
}

std::vector<std::string> vocabulary(const fs::path& pass_dir) {
  std::vector<std::string> words;
  std::ifstream file(pass_dir / "vocab.txt");
  for (std::string word; std::getline(file, word);) words.push_back(word);
  return words;
}

}  // namespace

int run_predict(int argc, char** argv) {
  const po::options_description flags = predict_options();
  const auto values = parse_command(argc, argv, kUsage, flags, "pass-folder");
  if (!values) return 0;
  if (values->count("model-from") == values->count("pass-folder")) {
    throw Error(ExitCode::kUsage, "give the pass folder once: as the argument or as --model-from");
  }
  const fs::path pass_dir = (*values)[values->count("model-from") ? "model-from" : "pass-folder"].as<std::string>();
  if (!values->count("input") || !values->count("output")) {
    throw Error(ExitCode::kUsage, "pstrain predict needs --input FILE and --output FILE (see --help)");
  }
  check_pass_folder(pass_dir);
  const fs::path input = (*values)["input"].as<std::string>();
  const fs::path output = (*values)["output"].as<std::string>();
  if (values->count("logits") && output.extension() != ".npy") {
    throw Error(ExitCode::kUsage, "--logits needs a .npy --output");
  }
  check_new_output("--output", output);
  const std::size_t batch = positive_flag(*values, "batch-size", 256);
  const std::size_t top_k = positive_flag(*values, "top-k", 5);

  std::optional<data::ShardMeta> meta;
  if (input.extension() != ".npy") meta = data::read_shard_meta(input);
  const SavedModel saved = load_saved_model(pass_dir, resolve_model_choice(*values), meta ? &*meta : nullptr);
  const data::Samples samples = read_samples(input, saved);

  const auto backend = compute::make_cpu_backend();
  const auto model = nn::make_graph_model(*backend, saved.plan, batch);
  model->set_parameters(saved.parameters);
  if (!saved.state.empty()) model->set_state(saved.state);
  const std::size_t classes = saved.plan.classes;
  const std::size_t width = nn::element_count(saved.plan.input);
  const bool click = saved.plan.loss == nn::LossKind::kBinaryCrossEntropy;  // one logit per sample
  PredictionTable table(output.extension() == ".npy", classes, top_k,
                        saved.info.tokens ? vocabulary(pass_dir) : std::vector<std::string>{},
                        values->count("logits") > 0, click);
  core::JaggedIds bags;               // CTR data: a batch's categorical fields
  std::optional<KeyedLookups> keyed;  // tables keyed by the raw id: where each id's row is
  if (!saved.keyed.empty()) keyed.emplace(saved.plan, saved.keyed);
  std::vector<float> logits;
  std::vector<std::int32_t> labels;
  for (std::size_t first = 0; first < samples.labels.size(); first += batch) {
    const std::size_t n = std::min(batch, samples.labels.size() - first);
    logits.resize(n * (click ? 1 : classes));
    if (samples.meta.categorical) {
      bags = core::sample_range(samples.categorical, first, n);
      model->set_categorical(&bags);
      if (keyed) keyed->place(bags, *model);
    }
    // The loss needs labels in range; the model's answer does not depend on them.
    labels.assign(samples.labels.begin() + static_cast<std::ptrdiff_t>(first),
                  samples.labels.begin() + static_cast<std::ptrdiff_t>(first + n));
    std::vector<std::int32_t> loss_labels(labels);
    for (std::int32_t& label : loss_labels) label = std::max(label, 0);
    model->evaluate_batch_logits({samples.features.data() + first * width, n * width}, loss_labels, n, logits);
    table.add(logits, labels, n);
  }
  write_file_atomically(output, table.bytes());
  std::cout << "pstrain predict: " << samples.labels.size() << " samples of " << input.string() << " -> "
            << output.string() << std::endl;
  return 0;
}

}  // namespace pstrain::inference
