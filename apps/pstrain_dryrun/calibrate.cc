// pstrain-calibrate: measures, with the real kernels on this machine (one BLAS thread, as every rank of a job on
// a full node runs), what one training step of a model costs, and writes the profile the SimGrid dry-run spends
// instead of computing (lib/simulation/job_profile.h, benchmarks/scale/README.md).
//
// The whole step (forward + backward of one batch, GraphModel::train_batch) is timed: the median of --repeats
// runs after three warm-up runs. It is dealt to the layers by their share of the plan's forward flops, a third
// to the forward pass and two thirds to the backward pass: the model does not time its layers one by one.
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
#include "nn/graph_model.h"
#include "nn/model_plan.h"
#include "nn/model_spec.h"
#include "nn/presets.h"
#include "simulation/job_profile.h"
#include "simulation/resident_memory.h"

namespace po = boost::program_options;
using namespace pstrain;

namespace {

struct CalibrationOptions {
  nn::PresetOptions preset;
  std::vector<std::size_t> input_shape{28, 28};
  std::size_t batch = 64;
  int repeats = 20;
  std::string output;
};

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
                                                       "resnet: channel multiplier")(
      "classes", po::value(&options.preset.classes)->default_value(10),
      "classes (nplm: the vocabulary)")("embedding-dim", po::value(&options.preset.embedding_dim)->default_value(30),
                                        "nplm: m")("input-shape", po::value(&shape)->default_value(shape),
                                                   "one sample: 28,28 | 32,32,3 | nplm: N-1 (e.g. 4)")(
      "batch-size", po::value(&options.batch)->default_value(64),
      "samples per step")("repeats", po::value(&options.repeats)->default_value(20),
                          "timed steps (the median is kept)");
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
    options.preset.direct = false;
  }
  if (options.batch == 0 || options.repeats < 1)
    throw Error(ExitCode::kUsage, "--batch-size and --repeats must be > 0");
  return options;
}

// Features the model accepts: token ids below the vocabulary for nplm, values in [0, 1) otherwise.
std::vector<float> random_features(const CalibrationOptions& options, std::size_t input_size) {
  std::mt19937 generator(1);
  std::vector<float> features(options.batch * input_size);
  const bool ids = options.preset.name == "nplm";
  for (float& value : features) {
    value = ids ? static_cast<float>(generator() % options.preset.vocab)
                : std::uniform_real_distribution<float>(0.0f, 1.0f)(generator);
  }
  return features;
}

double median_step_seconds(nn::Model& model, const CalibrationOptions& options) {
  const std::vector<float> features = random_features(options, model.input_size());
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
  const double total_flops = std::max(plan.forward_flops, 1.0);
  std::vector<std::pair<std::string, double>> shares;
  for (const nn::PlannedNode& node : plan.nodes)
    shares.emplace_back(node.spec.name, node.plan.forward_flops / total_flops);
  auto backend = compute::make_cpu_backend();
  auto model = nn::make_graph_model(*backend, std::move(plan), options.batch);
  model->initialize(1);
  const double step = median_step_seconds(*model, options);
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
