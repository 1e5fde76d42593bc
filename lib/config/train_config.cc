#include "config/train_config.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>

#include "core/error.h"
#include "core/parse_number.h"
#include "modes/traits.h"

namespace po = boost::program_options;

namespace pstrain::config {

namespace {

// The embedding tables of the click presets and model files: their size, and how the servers find an id's row.
po::options_description table_options() {
  po::options_description tables("Embedding tables");
  // clang-format off
  tables.add_options()
      ("table-rows", po::value<long long>()->default_value(0, "auto"), "dlrm, deepfm: rows of each field's table (ids hashed into them; with --table-keys exact, the most rows a table holds); auto: twice the field's distinct ids (ctr_fields.tsv) to a power of two, at most 2^22")
      ("table-keys", po::value<std::string>()->default_value("hashed"), "dlrm, deepfm: how the servers find an id's row: hashed (into --table-rows rows; unrelated ids share rows) | exact (a row per raw id, none shared: --table-rows is then each table's cap on rows held; an id gets a row after --admit-after sightings, the least recently used rows make room at the cap; ids without a row read a default row of zeros; --mode sync)")
      ("admit-after", po::value<long long>()->default_value(1), "--table-keys exact: an id gets a row at its N-th sighting (counted in a count-min sketch); before that it reads the default row and gets no update")
      ("admit-probability", po::value<double>()->default_value(1.0, "1"), "--table-keys exact: the share of ids ever admitted, drawn once per (seed, table, id)")
      ("row-ttl-steps", po::value<long long>()->default_value(0, "never"), "--table-keys exact: a row unseen for more than this many steps is evicted");
  // clang-format on
  return tables;
}

}  // namespace

po::options_description train_options() {
  po::options_description data("Data and outputs");
  // clang-format off
  data.add_options()
      ("data-dir", po::value<std::string>()->required(), "folder with train-NNNNN.h5 shards and test.h5 (pstrain-data)")
      ("output-dir", po::value<std::string>(), "(required) where node_<rank>/ logs, pass-NNNNN/ folders, metrics.jsonl and config.ini go")
      ("init-from", po::value<std::string>(), "start from the parameters of a pass folder (OUTPUT/pass-NNNNN)")
      ("tensorboard", po::value<bool>()->default_value(true, "true"), "write TensorBoard event files into OUTPUT/tensorboard/: scalars per pass and every --log-every-steps steps");
  // clang-format on
  po::options_description cluster("Cluster");
  // clang-format off
  cluster.add_options()
      ("num-pservers", po::value<int>()->default_value(-1), "parameter-server shards (ranks 0..P-1); -1: the sizing rule of docs/sizing.md from the model's bytes and FLOPs (half the ranks, at least 1, on one node; never more)")
      ("mode", po::value<std::string>()->default_value("sync"), modes::mode_help().c_str())
      ("staleness", po::value<int>()->default_value(3), "ssp: steps a trainer may run ahead of the slowest (0: lock-step)")
      ("geo-steps", po::value<long long>()->default_value(4), "geo: steps each trainer takes on its own copy between its meetings with the servers")
      ("dispatch", po::value<std::string>()->default_value("static"), "static (trainer t reads shards t mod T) | dynamic (async/ssp: trainers take chunks as they go, so a slow trainer takes fewer; every trainer reads every shard)")
      ("chunk-size", po::value<long long>()->default_value(512), "dynamic dispatch: samples per chunk")
      ("block-size", po::value<std::size_t>()->default_value(8192), "parameter block size in floats, the unit spread over shards")
      ("node-aggregation", po::value<std::string>()->default_value("auto"), "sync and geo with servers: the trainers of a node sum their gradients (in trainer order, weighted by samples) and one of them pushes the sum and gets the parameters for all: a server holds one gradient slot per node instead of one per trainer. on | off | auto (auto: where the trainers span several nodes and some node holds two or more; with several nodes of several trainers, on changes the bits against off by rounding, reproducibly for a layout). The step is then one-sided (not streamed); row tables held by rows stay per trainer; not with async, ssp or allreduce")
      ("overlap", po::value<std::string>()->default_value("auto"), "communication behind the computation: true | false | auto. Sync PS: each gradient block goes to its shard as soon as the backward pass has it and the next forward pass waits only for the blocks it reads (auto: where every rank has a processor of its own; false: one-sided exchange after the backward pass); async/ssp: the gradient is put block by block (auto: where all ranks share a node); all-reduce: buckets summed during the backward pass (auto: never, measured slower). The same bits every way, except all-reduce with --overlap true at more than 2 trainers")
      ("table-exchange", po::value<std::string>()->default_value("auto"), "row tables (embedding tables): sparse (the servers hold them by row; a step fetches and updates only the rows its batch looks up) | dense (shipped whole, as any parameter) | auto (sparse wherever there are servers, else dense)")
      ("poll-interval-us", po::value<int>()->default_value(0),
       "async and ssp: pause between polls that found nothing (the server's loop, the trainers' waits); 0 yields "
       "the processor instead of sleeping")
      ("timeout-seconds", po::value<double>()->default_value(600, "600"), "end the job when a rank waits this long for others (a rank died or stalled)")
      ("check-replicas-every-steps", po::value<long long>()->default_value(0), "allreduce: also compare the trainers' parameter checksums every N steps (they are compared at the end of every pass anyway)")
      ("device", po::value<std::string>()->default_value("cpu"), "cpu | gpu | auto (a GPU when this node has one); trainer k on a node uses GPU (k mod GPUs)");
  // clang-format on
  po::options_description model("Model and optimisation");
  // clang-format off
  model.add_options()
      ("model", po::value<std::string>()->default_value("mlp"), "a built-in model: mlp | cnn (conv + 2x2 max-pool layers, then fully connected) | resnet (the DAWNBench ResNet-9 shape; --width, --batch-norm) | nplm (Bengio et al. 2003's neural language model on N-gram token shards; --embedding-dim, --hidden, --direct) | dlrm, deepfm (click models on CTR data: --embedding-dim, --hidden, --bottom-hidden, --table-rows; unless given: --optimizer adagrad --lr 0.05 (deepfm: 0.0125) --batch-size 128)")
      ("model-file", po::value<std::string>(), "a model described layer by layer (docs/model-files.md); instead of --model")
      ("describe-model", po::bool_switch(), "print the model's layers (output shapes, parameters, FLOPs) for the data in --data-dir, and exit")
      ("width", po::value<double>()->default_value(1.0, "1"), "resnet: channel multiplier (64, 128, 256, 512 channels times this)")
      ("batch-norm", po::value<bool>()->default_value(true, "true"), "resnet: batch normalisation after every convolution (false: conv biases instead)")
      ("hidden", po::value<std::string>()->default_value("256,128"), "hidden layer widths, comma separated (cnn: the fully connected head, e.g. 128; nplm: one width, default 100), or none; dlrm: the top MLP, default 512,256; deepfm: the deep MLP, default 400,400)")
      ("embedding-dim", po::value<long long>()->default_value(30), "nplm: embedding size m of every context word; dlrm, deepfm: the field vectors' length, default 16")
      ("bottom-hidden", po::value<std::string>()->default_value("64"), "dlrm: the bottom MLP's widths over the dense features, before --embedding-dim")
      ("direct", po::value<bool>()->default_value(false, "false")->implicit_value(true, "true"), "nplm: direct connections from the concatenated embeddings to the output")
      ("conv-filters", po::value<std::string>()->default_value("32,64"), "cnn: filters of each conv layer, comma separated")
      ("kernel-size", po::value<long long>()->default_value(3), "cnn: odd square convolution kernel")
      ("activation", po::value<std::string>()->default_value("relu"), "relu | tanh | sigmoid")
      ("optimizer", po::value<std::string>()->default_value("momentum"), "sgd | momentum | adagrad | rowwise_adagrad (one accumulator per row of the tables the servers hold by rows, Adagrad elsewhere) | adam (--mode geo: sgd, its default)")
      ("lr", po::value<double>()->default_value(0.05, "0.05"), "learning rate")
      ("lr-schedule", po::value<std::string>()->default_value("constant"), "constant | cosine (decays to 0 over the run's updates) | piecewise (--lr times factors interpolated per update between --lr-points) | step (--lr times --lr-step-gamma every --lr-step-passes passes) | onecycle (PyTorch OneCycleLR's shape: --lr/25 up to --lr over the first 30% of updates, cosine, then down to --lr/25e4)")
      ("lr-points", po::value<std::string>()->default_value(""), "piecewise: positions in passes, comma separated, >= 0 and increasing, e.g. 0,5,24 (update u sits at (u-1)/updates-per-pass; before the first point and after the last the end factors hold)")
      ("lr-factors", po::value<std::string>()->default_value(""), "piecewise: multipliers of --lr at --lr-points, e.g. 0,1,0 (the seed's PiecewiseLinear([0, 5, 24], [0, max_lr, 0]) is --lr max_lr --lr-points 0,5,24 --lr-factors 0,1,0)")
      ("lr-warmup-passes", po::value<double>()->default_value(0, "0"), "multiply any schedule by min(1, u / (W x updates per pass)) for update u: a linear warm-up over the first W passes (0: none)")
      ("lr-step-passes", po::value<double>()->default_value(0, "0"), "step: passes between decays")
      ("lr-step-gamma", po::value<double>()->default_value(0.1, "0.1"), "step: factor per decay, in (0, 1]")
      ("momentum", po::value<double>()->default_value(0.9, "0.9"), "momentum coefficient")
      ("nesterov", po::value<bool>()->default_value(false, "false")->implicit_value(true, "true"), "momentum: Nesterov's form, as PyTorch's nesterov=True (v = mu v + g; w -= lr (g + mu v))")
      ("weight-decay", po::value<double>()->default_value(0.0, "0"), "L2 weight decay")
      ("no-decay-bias-and-norm", po::value<bool>()->default_value(false, "false")->implicit_value(true, "true"), "apply --weight-decay only to parameters whose name ends in .weight, not to biases or batch-norm scales and shifts")
      ("label-smoothing", po::value<double>()->default_value(0.0, "0"), "label smoothing e in [0, 1): the loss's target is (1 - e) one-hot + e / classes")
      ("augment", po::value<std::string>()->default_value("none"), "training-image augmentation, comma separated: crop:P (pad P zero pixels, random crop back), flip (left-right, p = 1/2), cutout:S (zero a random S x S square), e.g. crop:4,flip,cutout:8; drawn from (seed, pass, sample), so resumes repeat it exactly; none: off; evaluation never augments")
      ("batch-size", po::value<long long>()->default_value(64), "samples per step, per trainer")
      ("passes", po::value<long long>()->default_value(10), "passes over the training data")
      ("seed", po::value<unsigned long long>()->default_value(1), "seed for initialisation and shuffling")
      ("shuffle", po::value<bool>()->default_value(true, "true"), "reshuffle each trainer's samples every pass")
      ("eval-batch-size", po::value<long long>()->default_value(1000), "samples per evaluation batch")
      ("log-every-steps", po::value<long long>()->default_value(0), "also log every N steps (0: per pass only)")
      ("eval-every-steps", po::value<long long>()->default_value(0), "also evaluate the test set every N global steps (counted as checkpoints count them, so a resumed run evaluates where the uninterrupted one did): an \"eval\" record in metrics.jsonl, a log line and eval/* TensorBoard scalars (0: at the end of each pass only). sync, all-reduce and local runs; geo: a multiple of --geo-steps (the trainers hold the servers' model only at meetings); refused with async and ssp, which have no common step")
      ("progress-every-s", po::value<double>()->default_value(10, "10"), "a progress line (steps, samples/s, time left) every S seconds of a pass, from the lead trainer (0: off)");
  // clang-format on
  po::options_description checkpoints("Checkpoints and resume");
  // clang-format off
  checkpoints.add_options()
      ("checkpoint-every-steps", po::value<long long>()->default_value(0), "also checkpoint every N steps (0: off)")
      ("checkpoint-every-seconds", po::value<double>()->default_value(0, "0"), "also checkpoint every S seconds (0: off)")
      ("keep-checkpoints", po::value<int>()->default_value(3), "keep the newest N checkpoints (0: all)")
      ("resume", po::value<std::string>(), "auto (newest complete checkpoint in --output-dir) or a checkpoint folder");
  // clang-format on
  po::options_description all;
  all.add(data).add(cluster).add(model).add(table_options()).add(checkpoints);
  return all;
}

namespace {

long long positive(const po::variables_map& values, const char* flag) {
  const long long value = values[flag].as<long long>();
  if (value <= 0) throw Error(ExitCode::kUsage, cat("--", flag, " must be > 0 (got ", value, ")"));
  return value;
}

float positive_finite(const po::variables_map& values, const char* flag) {
  const double value = values[flag].as<double>();
  if (!std::isfinite(value) || value <= 0) {
    throw Error(ExitCode::kUsage, cat("--", flag, " must be a finite number > 0 (got ", value, ")"));
  }
  return static_cast<float>(value);
}

std::vector<double> parse_numbers(const std::string& text, const char* flag) {
  std::vector<double> numbers;
  if (text.empty()) return numbers;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    const std::optional<double> number = parse_number<double>(item);
    if (!number) throw Error(ExitCode::kUsage, cat("--", flag, " '", text, "': expected numbers separated by commas"));
    numbers.push_back(*number);
  }
  return numbers;
}

std::vector<std::size_t> parse_widths(const std::string& text, const char* flag) {
  std::vector<std::size_t> widths;
  if (text == "none") return widths;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    const std::optional<long long> width = parse_number<long long>(item);
    if (!width || *width <= 0) {
      throw Error(ExitCode::kUsage, cat("--", flag, " '", text, "': expected positive integers separated by commas"));
    }
    widths.push_back(static_cast<std::size_t>(*width));
  }
  return widths;
}

// --data-dir, --output-dir, --init-from.
void resolve_folders(const po::variables_map& values, TrainConfig& config) {
  config.data_dir = values["data-dir"].as<std::string>();
  config.describe_model = values["describe-model"].as<bool>();
  if (values.count("output-dir")) {
    config.output_dir = values["output-dir"].as<std::string>();
  } else if (!config.describe_model) {
    throw Error(ExitCode::kUsage, "the option '--output-dir' is required but missing");
  }
  if (values.count("init-from")) config.init_from = values["init-from"].as<std::string>();
}

// The layout, the mode and how its ranks talk.
void resolve_cluster(const po::variables_map& values, TrainConfig& config) {
  config.num_pservers = values["num-pservers"].as<int>();
  if (config.num_pservers < -1) throw Error(ExitCode::kUsage, "--num-pservers must be >= 0 (or -1 for the default)");
  config.mode = modes::mode_named(values["mode"].as<std::string>());
  const modes::ModeTraits& mode = modes::mode_traits(config.mode);  // of the mode just read, not the default's
  config.staleness = values["staleness"].as<int>();
  if (config.staleness < 0) throw Error(ExitCode::kUsage, "--staleness must be >= 0");
  config.block_size = values["block-size"].as<std::size_t>();
  if (config.block_size == 0) throw Error(ExitCode::kUsage, "--block-size must be > 0");
  config.table_exchange = values["table-exchange"].as<std::string>();
  if (config.table_exchange != "auto" && config.table_exchange != "sparse" && config.table_exchange != "dense") {
    throw Error(ExitCode::kUsage,
                cat("--table-exchange '", config.table_exchange, "' is not one of auto, sparse, dense"));
  }
  if (config.table_exchange == "sparse" && !mode.has_servers) {
    throw Error(ExitCode::kUsage,
                cat("--table-exchange sparse needs parameter servers to hold the rows; --mode ", mode.name,
                    " has none (its trainers average table gradients densely): use "
                    "auto or dense"));
  }
  config.poll_interval_us = values["poll-interval-us"].as<int>();
  if (config.poll_interval_us < 0) throw Error(ExitCode::kUsage, "--poll-interval-us must be >= 0");
  config.timeout_seconds = values["timeout-seconds"].as<double>();
  if (!std::isfinite(config.timeout_seconds) || config.timeout_seconds <= 0) {
    throw Error(ExitCode::kUsage, "--timeout-seconds must be a finite number > 0");
  }
  config.check_replicas_every_steps = values["check-replicas-every-steps"].as<long long>();
  if (config.check_replicas_every_steps < 0) throw Error(ExitCode::kUsage, "--check-replicas-every-steps must be >= 0");
  config.device = values["device"].as<std::string>();
  if (config.device != "cpu" && config.device != "gpu" && config.device != "auto") {
    throw Error(ExitCode::kUsage, cat("--device '", config.device, "' is not one of cpu, gpu, auto"));
  }
}

// The model: a preset and its shape, or a model file.
void resolve_model(const po::variables_map& values, TrainConfig& config) {
  config.model = values["model"].as<std::string>();
  // nn/presets.h's names (config sits below nn; a test checks the two lists agree).
  constexpr std::array<std::string_view, 6> kPresets{"mlp", "cnn", "resnet", "nplm", "dlrm", "deepfm"};
  if (std::find(kPresets.begin(), kPresets.end(), config.model) == kPresets.end()) {
    throw Error(ExitCode::kUsage,
                cat("--model '", config.model, "' is not one of mlp, cnn, resnet, nplm, dlrm, deepfm"));
  }
  if (values.count("model-file")) {
    if (!values["model"].defaulted()) {
      throw Error(ExitCode::kUsage,
                  cat("--model-file and --model ", config.model, " both name a model: give one of them"));
    }
    config.model_file = values["model-file"].as<std::string>();
    config.model = "file";
  }
  config.width = values["width"].as<double>();
  if (!std::isfinite(config.width) || config.width <= 0 || config.width > 64) {
    throw Error(ExitCode::kUsage, cat("--width ", config.width, " must be in (0, 64]"));
  }
  config.batch_norm = values["batch-norm"].as<bool>();
  config.hidden = parse_widths(values["hidden"].as<std::string>(), "hidden");
  if (config.model == "nplm" && values["hidden"].defaulted()) config.hidden = {kNplmHidden};
  if (config.model == "dlrm" && values["hidden"].defaulted()) config.hidden = {512, 256};
  if (config.model == "deepfm" && values["hidden"].defaulted()) config.hidden = {400, 400};
  config.embedding_dim = static_cast<std::size_t>(positive(values, "embedding-dim"));
  if (is_click_preset(config.model) && values["embedding-dim"].defaulted()) config.embedding_dim = kClickEmbeddingDim;
  config.bottom_hidden = parse_widths(values["bottom-hidden"].as<std::string>(), "bottom-hidden");
  const long long table_rows = values["table-rows"].as<long long>();
  if (table_rows < 0) throw Error(ExitCode::kUsage, cat("--table-rows ", table_rows, " must be positive (or auto)"));
  config.table_rows = static_cast<std::size_t>(table_rows);
  config.direct = values["direct"].as<bool>();
  config.conv_filters = parse_widths(values["conv-filters"].as<std::string>(), "conv-filters");
  config.kernel_size = static_cast<std::size_t>(positive(values, "kernel-size"));
  if (config.kernel_size % 2 == 0) {
    throw Error(ExitCode::kUsage, cat("--kernel-size ", config.kernel_size,
                                      " must be odd ('same' padding keeps the "
                                      "image size only for odd kernels)"));
  }
  config.activation = compute::parse_activation(values["activation"].as<std::string>());
}

// --table-keys and the policy of keyed tables (ps/keyed_rows.h); the tables themselves are checked where they are
// planned (run_common/table_layout.cc).
void resolve_table_keys(const po::variables_map& values, TrainConfig& config) {
  const std::string keys = values["table-keys"].as<std::string>();
  if (keys != "hashed" && keys != "exact") {
    throw Error(ExitCode::kUsage, cat("--table-keys '", keys, "' is not one of hashed, exact"));
  }
  TableKeys& table_keys = config.table_keys;
  table_keys.exact = keys == "exact";
  const long long admit_after = values["admit-after"].as<long long>();
  if (admit_after < 1 || admit_after > 65535) {
    throw Error(ExitCode::kUsage,
                cat("--admit-after ", admit_after, " must be in [1, 65535] (the sketch counts to 65535)"));
  }
  table_keys.admit_after = static_cast<std::uint32_t>(admit_after);
  table_keys.admit_probability = values["admit-probability"].as<double>();
  if (!(table_keys.admit_probability > 0 && table_keys.admit_probability <= 1)) {
    throw Error(ExitCode::kUsage, cat("--admit-probability ", table_keys.admit_probability, " must be in (0, 1]"));
  }
  table_keys.ttl_steps = values["row-ttl-steps"].as<long long>();
  if (table_keys.ttl_steps < 0) throw Error(ExitCode::kUsage, "--row-ttl-steps must be >= 0 (0: never)");
  // A rule given for hashed tables would do nothing: refused, unless it is the default (config.ini writes every
  // flag, and a run's config.ini given back must resolve to the same run).
  const TableKeys defaults;
  const bool policy_given = table_keys.admit_after != defaults.admit_after ||
                            table_keys.admit_probability != defaults.admit_probability ||
                            table_keys.ttl_steps != defaults.ttl_steps;
  if (!table_keys.exact && policy_given) {
    throw Error(ExitCode::kUsage,
                "--admit-after, --admit-probability and --row-ttl-steps are rules of keyed tables: "
                "give them with --table-keys exact");
  }
  if (table_keys.exact && config.init_from) {
    throw Error(ExitCode::kUsage,
                "--table-keys exact does not start from --init-from's pass folder yet: leave one out");
  }
  const modes::ModeTraits& mode = modes::mode_traits(config.mode);
  if (table_keys.exact && (!mode.has_servers || mode.trainers_step_alone)) {
    throw Error(ExitCode::kUsage,
                cat("--table-keys exact: the servers keep keyed tables in --mode sync, async or ssp; ", "--mode ",
                    mode.name, " keeps the rows on the trainers"));
  }
}

// The optimizer, its schedule, the batches and the passes.
void resolve_training(const po::variables_map& values, TrainConfig& config) {
  config.optimizer.kind = values["optimizer"].as<std::string>();
  // The click presets train well without a flag (Adagrad at --lr's default 0.05, deepfm's at kDeepFmLearningRate,
  // batches of 128: the best of comparisons on synthetic-ctr data, docs/ctr.md); any flag given wins.
  if (is_click_preset(config.model) && values["optimizer"].defaulted()) config.optimizer.kind = "adagrad";
  config.optimizer.learning_rate = positive_finite(values, "lr");
  if (config.model == "deepfm" && values["lr"].defaulted()) config.optimizer.learning_rate = kDeepFmLearningRate;
  config.optimizer.schedule = values["lr-schedule"].as<std::string>();
  config.optimizer.momentum = static_cast<float>(values["momentum"].as<double>());
  config.optimizer.weight_decay = static_cast<float>(values["weight-decay"].as<double>());
  config.optimizer.nesterov = values["nesterov"].as<bool>();
  config.optimizer.decay_bias_and_norm = !values["no-decay-bias-and-norm"].as<bool>();
  config.optimizer.lr_points = parse_numbers(values["lr-points"].as<std::string>(), "lr-points");
  config.optimizer.lr_factors = parse_numbers(values["lr-factors"].as<std::string>(), "lr-factors");
  config.optimizer.warmup_passes = values["lr-warmup-passes"].as<double>();
  config.optimizer.step_passes = values["lr-step-passes"].as<double>();
  config.optimizer.step_gamma = values["lr-step-gamma"].as<double>();
  // The optimizer's own checks (schedule names, points increasing and >= 0, ...), here so that a bad value
  // ends the job before anything is created.
  optim::make_optimizer(config.optimizer, 0);
  const double smoothing = values["label-smoothing"].as<double>();
  if (!(smoothing >= 0.0 && smoothing < 1.0)) {
    throw Error(ExitCode::kUsage, cat("--label-smoothing must be in [0, 1), got ", smoothing));
  }
  config.label_smoothing = static_cast<float>(smoothing);
  config.augment = data::parse_augment_spec(values["augment"].as<std::string>());
  config.batch_size = static_cast<std::size_t>(positive(values, "batch-size"));
  if (is_click_preset(config.model) && values["batch-size"].defaulted()) config.batch_size = kClickBatchSize;
  const long long passes = positive(values, "passes");
  if (passes > 99999) throw Error(ExitCode::kUsage, "--passes must be at most 99999 (pass-NNNNN folders)");
  config.passes = static_cast<int>(passes);
  config.seed = values["seed"].as<unsigned long long>();
  config.shuffle = values["shuffle"].as<bool>();
}

// Evaluation, logs, TensorBoard and --overlap.
void resolve_reporting(const po::variables_map& values, TrainConfig& config) {
  config.eval_batch_size = static_cast<std::size_t>(positive(values, "eval-batch-size"));
  const long long log_every = values["log-every-steps"].as<long long>();
  if (log_every < 0) throw Error(ExitCode::kUsage, "--log-every-steps must be >= 0");
  config.log_every_steps = static_cast<std::size_t>(log_every);
  config.eval_every_steps = values["eval-every-steps"].as<long long>();
  if (config.eval_every_steps < 0) throw Error(ExitCode::kUsage, "--eval-every-steps must be >= 0");
  const modes::ModeTraits& mode = modes::mode_traits(config.mode);
  if (config.eval_every_steps > 0 && mode.has_servers && !mode.common_steps) {
    throw Error(ExitCode::kUsage,
                cat("--eval-every-steps evaluates the model every trainer holds at a common step: --mode ", mode.name,
                    " has none (each trainer steps on its own); use --mode sync, geo or allreduce, or the "
                    "per-pass evaluation"));
  }
  config.progress_every_s = values["progress-every-s"].as<double>();
  if (!std::isfinite(config.progress_every_s) || config.progress_every_s < 0) {
    throw Error(ExitCode::kUsage, "--progress-every-s must be a finite number >= 0");
  }
  config.tensorboard = values["tensorboard"].as<bool>();
  const std::string overlap = values["overlap"].as<std::string>();
  if (overlap != "auto" && overlap != "true" && overlap != "false") {
    throw Error(ExitCode::kUsage, cat("--overlap '", overlap, "' is not one of auto, true, false"));
  }
  config.overlap = overlap == "auto" ? Overlap::kAuto : overlap == "true" ? Overlap::kOn : Overlap::kOff;
}

// --node-aggregation, and the modes and transports it goes with (job/node_aggregation.h).
void resolve_node_aggregation(const po::variables_map& values, TrainConfig& config) {
  const std::string text = values["node-aggregation"].as<std::string>();
  if (text != "auto" && text != "on" && text != "off") {
    throw Error(ExitCode::kUsage, cat("--node-aggregation '", text, "' is not one of auto, on, off"));
  }
  config.node_aggregation = text == "auto" ? NodeAggregation::kAuto
                            : text == "on" ? NodeAggregation::kOn
                                           : NodeAggregation::kOff;
  if (config.node_aggregation != NodeAggregation::kOn) return;
  const modes::ModeTraits& mode = modes::mode_traits(config.mode);
  if (!mode.has_servers || !mode.common_steps) {
    throw Error(ExitCode::kUsage, cat("--node-aggregation on sums the gradients of a node's trainers for one common "
                                      "step: it needs --mode sync or geo, not --mode ",
                                      mode.name));
  }
  if (config.overlap == Overlap::kOn) {
    throw Error(ExitCode::kUsage,
                "--node-aggregation on with --overlap true: a node's leader pushes the node's sum after the backward "
                "pass (one-sided), it cannot stream each trainer's blocks; leave one of them out");
  }
}

// Checkpoints and --resume.
void resolve_checkpoints(const po::variables_map& values, TrainConfig& config) {
  config.checkpoint_every_steps = values["checkpoint-every-steps"].as<long long>();
  if (config.checkpoint_every_steps < 0) throw Error(ExitCode::kUsage, "--checkpoint-every-steps must be >= 0");
  config.checkpoint_every_seconds = values["checkpoint-every-seconds"].as<double>();
  if (!std::isfinite(config.checkpoint_every_seconds) || config.checkpoint_every_seconds < 0) {
    throw Error(ExitCode::kUsage, "--checkpoint-every-seconds must be a finite number >= 0");
  }
  config.keep_checkpoints = values["keep-checkpoints"].as<int>();
  if (config.keep_checkpoints < 0) throw Error(ExitCode::kUsage, "--keep-checkpoints must be >= 0");
  if (values.count("resume")) {
    config.resume = values["resume"].as<std::string>();
    if (config.resume.empty()) throw Error(ExitCode::kUsage, "--resume needs 'auto' or a checkpoint folder");
  }
}

// --dispatch and what the mode allows of it and of --num-pservers.
void resolve_dispatch(const po::variables_map& values, TrainConfig& config) {
  const modes::ModeTraits& mode = modes::mode_traits(config.mode);
  const std::string dispatch = values["dispatch"].as<std::string>();
  if (dispatch != "static" && dispatch != "dynamic") {
    throw Error(ExitCode::kUsage, cat("--dispatch '", dispatch, "' is not one of static, dynamic"));
  }
  config.dynamic_dispatch = dispatch == "dynamic";
  config.chunk_size = static_cast<std::size_t>(positive(values, "chunk-size"));
  if (config.dynamic_dispatch && !mode.dynamic_dispatch) {
    throw Error(ExitCode::kUsage,
                cat("--dispatch dynamic needs --mode async or ssp (", mode.name, " steps every trainer together)"));
  }
  if (!mode.has_servers && config.num_pservers > 0) {
    throw Error(ExitCode::kUsage, cat("--mode ", mode.name,
                                      " has no parameter servers: --num-pservers must be 0 or "
                                      "left out (got ",
                                      config.num_pservers, ")"));
  }
}

}  // namespace

// --geo-steps, and what a mode whose trainers step alone between meetings allows (modes/traits.h).
void resolve_steps_alone(const po::variables_map& values, TrainConfig& config) {
  const modes::ModeTraits& mode = modes::mode_traits(config.mode);
  config.steps_alone = positive(values, "geo-steps");
  if (!mode.trainers_step_alone) return;
  // GEO-SGD's own default; another --optimizer runs on every trainer, its state (velocity, moments) the trainer's
  // own across meetings (modes/geo.cc), saved per trainer in checkpoints (checkpoint/trainer_states.h).
  if (values["optimizer"].defaulted()) config.optimizer.kind = "sgd";
  if (config.checkpoint_every_steps % config.steps_alone != 0) {
    throw Error(ExitCode::kUsage,
                cat("--checkpoint-every-steps ", config.checkpoint_every_steps, " is not a multiple of --geo-steps ",
                    config.steps_alone, ": --mode ", mode.name, " writes checkpoints when trainers and servers meet"));
  }
  if (config.eval_every_steps % config.steps_alone != 0) {
    throw Error(ExitCode::kUsage, cat("--eval-every-steps ", config.eval_every_steps,
                                      " is not a multiple of --geo-steps ", config.steps_alone, ": with --mode ",
                                      mode.name, " the trainers hold the servers' model only when they meet them"));
  }
}

TrainConfig resolve_train_config(const po::variables_map& values) {
  TrainConfig config;
  resolve_folders(values, config);
  resolve_cluster(values, config);
  resolve_model(values, config);
  resolve_table_keys(values, config);
  resolve_training(values, config);
  resolve_reporting(values, config);
  resolve_checkpoints(values, config);
  resolve_dispatch(values, config);
  resolve_steps_alone(values, config);
  resolve_node_aggregation(values, config);
  return config;
}

}  // namespace pstrain::config
