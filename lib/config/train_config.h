#pragma once
// pstrain's flags: their declaration (for --help, the environment and the INI file) and the validated result.
#include <boost/program_options.hpp>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "compute/backend.h"
#include "data/augment.h"
#include "modes/traits.h"
#include "optim/optimizer.h"

namespace pstrain::config {

// allreduce: no servers; trainers average gradients collectively (NCCL on GPUs, MPI_Allreduce on CPUs).

// --overlap: communication behind computation; kAuto decides from the layout (job/overlap_plan.h).
enum class Overlap { kAuto, kOn, kOff };
// --node-aggregation: the trainers of a node sum their gradients before one of them pushes (comm/push_groups.h);
// kAuto decides from the layout (job/node_aggregation.h).
enum class NodeAggregation { kAuto, kOn, kOff };

inline constexpr std::size_t kNplmHidden = 100;        // nplm's hidden width when --hidden is not given
inline constexpr std::size_t kClickEmbeddingDim = 16;  // dlrm's and deepfm's --embedding-dim unless given
inline constexpr std::size_t kClickBatchSize = 128;    // and their --batch-size
// deepfm's --lr unless given (dlrm keeps --lr's default, 0.05): on synthetic-ctr data, one pass, Adagrad, test AUC
// 0.7707 at 0.0125 against 0.7695 at 0.025 and 0.763 at 0.05 (2M lines, batch 128); 0.7385, 0.7386 and 0.7239 on
// 200,000 lines (benchmarks/README.md "DeepFM's learning rate").
inline constexpr double kDeepFmLearningRate = 0.0125;

// The presets of click models over CTR data (nn/click_presets.h), whose defaults differ (resolve_training).
inline bool is_click_preset(const std::string& model) {
  return model == "dlrm" || model == "deepfm";
}

// --table-keys and its policy: tables keyed by the raw id on the servers (ps/keyed_rows.h), or hashed.
struct TableKeys {
  bool exact = false;
  std::uint32_t admit_after = 1;   // --admit-after
  double admit_probability = 1.0;  // --admit-probability
  std::int64_t ttl_steps = 0;      // --row-ttl-steps; 0: never
};

struct TrainConfig {
  std::filesystem::path data_dir;
  std::filesystem::path output_dir;
  std::optional<std::filesystem::path> init_from;

  int num_pservers = -1;  // -1: default layout
  modes::Mode mode = modes::Mode::kSync;
  std::string model = "mlp";                        // mlp | cnn | resnet, or "file" with model_file
  std::optional<std::filesystem::path> model_file;  // --model-file
  bool describe_model = false;                      // print the model and exit
  double width = 1.0;                               // resnet: channel multiplier
  bool batch_norm = true;                           // resnet: batch norm after every convolution
  std::vector<std::size_t> hidden{256, 128};        // mlp: hidden widths; cnn: widths of the fully connected head;
                                                    // nplm: none or one (kNplmHidden unless --hidden is given)
  std::size_t embedding_dim = 30;                   // nplm: m; dlrm, deepfm: kClickEmbeddingDim unless given
  std::vector<std::size_t> bottom_hidden{64};       // dlrm: the bottom MLP's widths
  std::size_t table_rows = 0;                       // dlrm, deepfm: rows per table; 0: from the distinct ids
  TableKeys table_keys;                             // hashed unless --table-keys exact
  bool direct = false;                              // nplm: direct connections from the embeddings to the output
  std::vector<std::size_t> conv_filters{32, 64};    // cnn: filters per conv layer (each followed by a 2x2 pool)
  std::size_t kernel_size = 3;                      // cnn: odd square kernel
  compute::Activation activation = compute::Activation::kRelu;
  std::string device = "cpu";  // cpu | gpu | auto (a GPU when this node has one)

  optim::OptimizerConfig optimizer;
  float label_smoothing = 0.0f;  // in [0, 1): the loss target is (1 - e) one-hot + e / classes (nn/loss.h)
  data::AugmentSpec augment;     // training batches only; off by default
  std::size_t batch_size = 64;
  int passes = 10;
  std::uint64_t seed = 1;
  bool shuffle = true;
  std::size_t block_size = 8192;
  std::string table_exchange = "auto";  // row tables: auto | sparse | dense (run_common/table_layout.h)
  int poll_interval_us = 0;             // 0: yield the processor between polls (core/poll_pause.h)
  std::size_t eval_batch_size = 1000;
  std::size_t log_every_steps = 0;  // 0: per-pass lines only
  double progress_every_s = 10;     // a progress line every S s of a pass (report/progress_line.h); 0: off
  bool tensorboard = true;          // TensorBoard event files in OUTPUT/tensorboard/ (the lead trainer writes them)
  // The lead trainer also evaluates the test set every N global steps (0: at the end of each pass only); modes
  // whose trainers step together only (geo: at meetings, a multiple of --geo-steps).
  std::int64_t eval_every_steps = 0;

  // Checkpoints (sync and local training): every N steps and/or S seconds, and at the end of every pass.
  std::int64_t checkpoint_every_steps = 0;
  double checkpoint_every_seconds = 0;
  int keep_checkpoints = 3;
  std::string resume;                // "" (refuse a folder with checkpoints), "auto", or a checkpoint folder
  int staleness = 3;                 // ssp: how many steps a trainer may run ahead of the slowest
  std::int64_t steps_alone = 4;      // --geo-steps: steps a trainer takes alone between meetings with the servers
  bool dynamic_dispatch = false;     // trainers take chunks from a dispatcher instead of fixed shards
  std::size_t chunk_size = 512;      // samples per dispatched chunk
  Overlap overlap = Overlap::kAuto;  // communication behind computation where the mode can
  std::int64_t check_replicas_every_steps = 0;  // allreduce: compare trainer replicas every N steps too
  double timeout_seconds = 600;                 // the watchdog: longest wait for other ranks before the job ends
  // sync, geo: the trainers of a node push together (job/node_aggregation.h)
  NodeAggregation node_aggregation = NodeAggregation::kAuto;
};

// Everything pstrain parses (the test suite's fault injection is not among them: run_common/run_hooks.h).
boost::program_options::options_description train_options();

// Validates every value; throws pstrain::Error(kUsage) naming the flag.
TrainConfig resolve_train_config(const boost::program_options::variables_map& values);

}  // namespace pstrain::config
