// pstrain-calibrate: measures, with the real kernels on this machine (one BLAS thread, as every rank of a job on
// a full node runs), what one training step of a model costs, and writes the profile the SimGrid dry-run spends
// instead of computing (lib/simulation/job_profile.h, benchmarks/scale/README.md).
//
// The whole step (forward + backward of one batch, GraphModel::train_batch) is timed: the median of --repeats
// runs after three warm-up runs. It is dealt to the layers by their share of the plan's forward flops, a third
// to the forward pass and two thirds to the backward pass: the model does not time its layers one by one.
//
// A model with a row table (the NPLM's embedding, which pstrain's servers hold by rows) also gets the table and
// kIdBatches batches of ids in its profile, for the rows a simulated step fetches and pushes: batches of random
// training samples of --data-dir (a token folder of pstrain-data; it also gives the vocabulary, the context and
// the classes), or without it ids drawn from a Zipf law (rank k with weight 1/k) over --classes words. The step
// is timed on the whole model (the whole table's gradient included), not on the trainer's cut model.
#include <mpi.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <iostream>
#include <random>
#include <sstream>
#include <vector>

#include "compute/backend.h"
#include "compute/cpu/blas_kernels.h"
#include "core/error.h"
#include "data/shard.h"
#include "nn/graph_model.h"
#include "nn/model_plan.h"
#include "nn/model_spec.h"
#include "nn/presets.h"
#include "ps/model_tables.h"
#include "simulation/job_profile.h"
#include "simulation/resident_memory.h"

namespace po = boost::program_options;
using namespace pstrain;

namespace {

constexpr std::size_t kIdBatches = 64;  // at least the trainers of a 64-rank job, each starting at its own batch

struct CalibrationOptions {
  nn::PresetOptions preset;
  std::vector<std::size_t> input_shape{28, 28};
  std::size_t batch = 64;
  int repeats = 20;
  std::string output;
  std::string data_dir;  // nplm: a token folder (vocabulary, context, and the ids of the profile's batches)
};

// nplm with --data-dir: the vocabulary, the context and the classes from the folder's metadata.
void read_token_sizes(CalibrationOptions& options) {
  const data::ShardMeta meta = data::read_shard_meta(data::test_shard_path(options.data_dir));
  if (!meta.tokens) throw Error(ExitCode::kUsage, cat("--data-dir ", options.data_dir, " holds no token shards"));
  options.preset.vocab = meta.tokens->vocab_size;
  options.preset.classes = meta.num_classes;
  options.input_shape.assign(meta.sample_shape.begin(), meta.sample_shape.end());
}

std::vector<std::size_t> parse_list(const std::string& text) {
  std::vector<std::size_t> values;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) values.push_back(std::stoul(item));
  return values;
}

CalibrationOptions parse(int argc, char** argv) {
  CalibrationOptions options;
  std::string hidden = "256,128", shape = "28,28";
  po::options_description flags("pstrain-calibrate --output PROFILE [options]");
  flags.add_options()("help", "this text")("output", po::value(&options.output)->required(),
                                           "profile to write")("model",
                                                               po::value(&options.preset.name)->default_value("mlp"),
                                                               "mlp | cnn | resnet | nplm")(
      "hidden", po::value(&hidden)->default_value(hidden),
      "mlp, cnn: hidden widths; nplm: 0 or one width")("width", po::value(&options.preset.width)->default_value(1.0),
                                                       "resnet: channel multiplier")("classes",
                                                                                     po::value(&options.preset.classes)
                                                                                         ->default_value(10),
                                                                                     "classes (nplm: the vocabulary)")(
      "embedding-dim", po::value(&options.preset.embedding_dim)->default_value(30),
      "nplm: m")("input-shape", po::value(&shape)->default_value(shape),
                 "one sample: 28,28 | 32,32,3 | nplm: N-1 (e.g. 4)")("batch-size",
                                                                     po::value(&options.batch)->default_value(64),
                                                                     "samples per step")(
      "repeats", po::value(&options.repeats)->default_value(20),
      "timed steps (the median is kept)")("direct", po::value(&options.preset.direct)->default_value(false),
                                          "nplm: direct connections from the embeddings to the output")(
      "data-dir", po::value(&options.data_dir), "nplm: token data (pstrain-data): sizes and the batches' ids");
  po::variables_map values;
  po::store(po::parse_command_line(argc, argv, flags), values);
  if (values.count("help")) {
    std::cout << flags << '\n';
    std::exit(0);
  }
  po::notify(values);
  options.preset.hidden = hidden == "0" ? std::vector<std::size_t>{} : parse_list(hidden);
  options.input_shape = parse_list(shape);
  if (options.preset.name == "nplm") {
    options.preset.vocab = options.preset.classes;
    if (!options.data_dir.empty()) read_token_sizes(options);
  }
  if (options.batch == 0 || options.repeats < 1)
    throw Error(ExitCode::kUsage, "--batch-size and --repeats must be > 0");
  return options;
}

// kIdBatches batches of `ids_per_batch` ids: random training samples of --data-dir, or Zipf-distributed ids.
std::vector<std::vector<std::uint64_t>> id_batches(const CalibrationOptions& options, std::size_t ids_per_batch) {
  std::mt19937_64 generator(1);
  std::vector<std::vector<std::uint64_t>> batches(kIdBatches);
  if (options.data_dir.empty()) {
    std::vector<double> weights(options.preset.vocab);
    for (std::size_t k = 0; k < weights.size(); ++k) weights[k] = 1.0 / static_cast<double>(k + 1);
    std::discrete_distribution<std::uint64_t> zipf(weights.begin(), weights.end());
    for (auto& batch : batches) {
      for (std::size_t i = 0; i < ids_per_batch; ++i) batch.push_back(zipf(generator));
    }
    return batches;
  }
  std::vector<float> features;  // every training sample's ids
  for (const auto& shard : data::list_train_shards(options.data_dir)) {
    const data::Samples samples = data::read_shard(shard);
    features.insert(features.end(), samples.features.begin(), samples.features.end());
  }
  const std::size_t per_sample = ids_per_batch / options.batch;
  std::uniform_int_distribution<std::size_t> pick(0, features.size() / per_sample - 1);
  for (auto& batch : batches) {
    for (std::size_t sample = 0; sample < options.batch; ++sample) {
      const std::size_t first = pick(generator) * per_sample;
      for (std::size_t i = 0; i < per_sample; ++i) batch.push_back(static_cast<std::uint64_t>(features[first + i]));
    }
  }
  return batches;
}

// Features the model accepts: the first id batch for a model with a table, token ids below the vocabulary for
// nplm, values in [0, 1) otherwise.
std::vector<float> random_features(const CalibrationOptions& options, std::size_t input_size,
                                   const simulation::JobProfile& profile) {
  if (!profile.id_batches.empty()) {
    const std::vector<std::uint64_t>& ids = profile.id_batches[0];
    std::vector<float> features(ids.begin(), ids.end());
    return features;
  }
  std::mt19937 generator(1);
  std::vector<float> features(options.batch * input_size);
  const bool ids = options.preset.name == "nplm";
  for (float& value : features) {
    value = ids ? static_cast<float>(generator() % options.preset.vocab)
                : std::uniform_real_distribution<float>(0.0f, 1.0f)(generator);
  }
  return features;
}

double median_step_seconds(nn::Model& model, const CalibrationOptions& options, const simulation::JobProfile& profile) {
  const std::vector<float> features = random_features(options, model.input_size(), profile);
  std::vector<std::int32_t> labels(options.batch);
  for (std::size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<std::int32_t>(i % model.num_classes());
  std::vector<double> times;
  for (int run = 0; run < options.repeats + 3; ++run) {
    const auto start = std::chrono::steady_clock::now();
    model.train_batch(features, labels, options.batch);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (run >= 3) times.push_back(seconds);
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

simulation::JobProfile calibrate(const CalibrationOptions& options, std::size_t baseline_bytes) {
  nn::ModelPlan plan = nn::plan_model(nn::parse_model_text(nn::preset_text(options.preset), "preset"),
                                      nn::model_input_shape(options.input_shape), options.preset.classes);
  simulation::JobProfile profile;
  profile.model = options.preset.name;
  profile.batch = options.batch;
  profile.baseline_bytes = baseline_bytes;
  for (const nn::ParameterInfo& parameter : plan.parameters)
    profile.parameters.push_back({parameter.name, parameter.size});
  // The tables pstrain's servers hold by rows (--table-exchange auto), the same for any number of servers.
  const ps::TablePlan tables = ps::plan_model_tables(plan, 1, options.batch, {}, ps::ComputedIdTables::kStayDense, "");
  for (std::size_t t = 0; t < tables.size(); ++t) {
    const ps::TableSpec& table = tables.table(t);
    profile.tables.push_back({table.name, table.rows, table.width, table.ids_per_sample});
  }
  if (tables.size() > 1) throw Error(ExitCode::kUsage, "the dry-run drives at most one row table");
  if (!tables.empty()) profile.id_batches = id_batches(options, options.batch * tables.table(0).ids_per_sample);
  const double total_flops = std::max(plan.forward_flops, 1.0);
  std::vector<std::pair<std::string, double>> shares;
  for (const nn::PlannedNode& node : plan.nodes)
    shares.emplace_back(node.spec.name, node.plan.forward_flops / total_flops);
  auto backend = compute::make_cpu_backend();
  auto model = nn::make_graph_model(*backend, std::move(plan), options.batch);
  model->initialize(1);
  const double step = median_step_seconds(*model, options, profile);
  profile.trainer_bytes = simulation::resident_bytes() - baseline_bytes;
  for (const auto& [name, share] : shares) {
    if (share > 0) profile.layers.push_back({name, step * share / 3, step * share * 2 / 3});
  }
  return profile;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const CalibrationOptions options = parse(argc, argv);
    compute::use_best_cpu_libraries(argv);  // the kernels pstrain itself runs (it re-executes itself the same way)
    MPI_Init(&argc, &argv);                 // a rank's baseline includes MPI's own segments
    compute::share_blas_threads(1);
    const std::size_t baseline = simulation::resident_bytes();
    const simulation::JobProfile profile = calibrate(options, baseline);
    simulation::write_profile(profile, options.output);
    std::cout << "pstrain-calibrate: " << profile.model << ", batch " << profile.batch << ": "
              << profile.step_seconds() * 1e3 << " ms a step, " << profile.parameter_count() << " parameters, "
              << profile.trainer_bytes / 1048576.0 << " MiB model memory, baseline " << baseline / 1048576.0
              << " MiB -> " << options.output << '\n';
    MPI_Finalize();
    return 0;
  } catch (const Error& error) {
    std::cerr << "pstrain-calibrate: " << error.what() << '\n';
    return static_cast<int>(error.code());
  } catch (const std::exception& error) {
    std::cerr << "pstrain-calibrate: " << error.what() << '\n';
    return static_cast<int>(ExitCode::kUsage);
  }
}
