#include "run_common/model_factory.h"

#include <unistd.h>

#include <algorithm>

#include "core/error.h"
#include "core/log.h"
#include "data/ctr/ctr_fields.h"
#include "nn/click_presets.h"
#include "nn/graph_model.h"
#include "nn/presets.h"

namespace pstrain::run_common {

namespace {

std::string host_name() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
}

// Token ids reach the model as floats: an embedding that reads them must have a row for every id of the data's
// vocabulary, or training would stop at the first rare word instead of before it starts.
void check_embeddings_take_ids(const nn::ModelPlan& plan, const data::TokenMeta& tokens,
                               const std::filesystem::path& data_dir) {
  for (const nn::PlannedNode& node : plan.nodes) {
    const bool reads_data =
        std::find(node.inputs.begin(), node.inputs.end(), nn::ModelPlan::kDataInput) != node.inputs.end();
    if (!reads_data || node.spec.type != "embedding") continue;
    const std::uint64_t rows = node.plan.parameters.at(0).shape.at(0);
    if (rows < tokens.vocab_size) {
      throw Error(ExitCode::kUsage,
                  cat(plan.spec.where(node.spec), "layer ", node.spec.name, " (embedding): vocab=", rows,
                      " is smaller than the ", tokens.vocab_size, " words of ", data_dir.string(), "/vocab.txt"));
    }
  }
}

}  // namespace

std::unique_ptr<compute::Backend> make_backend(const std::string& device, const comm::WorldLayout& layout,
                                               RunHooks& hooks) {
  if (layout.is_server()) return compute::make_cpu_backend();
  if (auto chosen = hooks.trainer_backend(device)) return chosen;
  if (device == "cpu") return compute::make_cpu_backend();
  const int gpus = compute::gpu_count();
  if (gpus == 0) {
    if (device == "auto") return compute::make_cpu_backend();
    throw Error(ExitCode::kUsage, cat("--device gpu: ", layout.describe(), " on ", host_name(), " sees no GPU (",
                                      compute::built_with_cuda() ? "no CUDA device or driver on this node"
                                                                 : "this pstrain was built without CUDA",
                                      "); use --device cpu or auto"));
  }
  const int ordinal = layout.local_trainer_rank % gpus;
  if (layout.local_trainer_rank >= gpus) {
    log_warning(layout.describe(), " shares GPU ", ordinal, " with another trainer: this node has ", gpus,
                " GPU(s) for more trainers");
  }
  return compute::make_gpu_backend(ordinal);
}

namespace {

// dlrm and deepfm: the data's dense features, and a table per categorical field sized by --table-rows or from
// the distinct ids the data folder records (ctr_fields.tsv).
void size_click_preset(const config::TrainConfig& config, const data::ShardMeta& meta, nn::PresetOptions& options) {
  if (!meta.categorical) {
    throw Error(ExitCode::kUsage,
                cat("--model ", config.model,
                    " needs CTR data (pstrain-data criteo | movielens | "
                    "synthetic-ctr); ",
                    config.data_dir.string(), " holds samples of shape ", data::shape_text(meta.sample_shape)));
  }
  options.dense_features = meta.sample_shape.at(0);
  options.bottom_hidden = config.bottom_hidden;
  const std::vector<std::string>& fields = meta.categorical->field_names;
  if (config.table_rows > 0) {
    options.field_rows.assign(fields.size(), config.table_rows);
    return;
  }
  for (const std::uint64_t distinct : data::ctr::read_distinct_ids(config.data_dir, fields)) {
    options.field_rows.push_back(nn::click_table_rows(distinct));
  }
}

}  // namespace

nn::ModelPlan plan_job_model(const config::TrainConfig& config, const data::ShardMeta& meta) {
  const auto& shape = meta.sample_shape;
  if (config.model == "cnn" && shape.size() != 2 && shape.size() != 3) {
    throw Error(ExitCode::kUsage, cat("--model cnn needs image samples (height x width, or height x width x "
                                      "channels); ",
                                      config.data_dir.string(), " holds samples of shape ", data::shape_text(shape)));
  }
  if (config.model == "nplm" && !meta.tokens) {
    throw Error(ExitCode::kUsage,
                cat("--model nplm needs token shards (N-gram windows from pstrain-data brown or text); ",
                    config.data_dir.string(), " holds samples of shape ", data::shape_text(shape)));
  }
  nn::ModelSpec spec;
  if (config.model_file) {
    spec = nn::read_model_file(*config.model_file);
  } else {
    nn::PresetOptions options;
    options.name = config.model;
    options.hidden = config.hidden;
    options.conv_filters = config.conv_filters;
    options.kernel_size = config.kernel_size;
    options.activation = config.activation;
    options.width = config.width;
    options.batch_norm = config.batch_norm;
    options.classes = meta.num_classes;
    options.vocab = meta.tokens ? meta.tokens->vocab_size : 0;
    options.embedding_dim = config.embedding_dim;
    options.direct = config.direct;
    if (config::is_click_preset(config.model)) size_click_preset(config, meta, options);
    spec = nn::parse_model_text(nn::preset_text(options), "preset " + config.model);
  }
  nn::ModelPlan plan =
      nn::plan_model(std::move(spec), nn::model_input_shape({shape.begin(), shape.end()}), meta.num_classes);
  if (meta.tokens) check_embeddings_take_ids(plan, *meta.tokens, config.data_dir);
  const std::size_t fields = meta.categorical ? meta.categorical->field_names.size() : 0;
  if (plan.categorical_fields > fields) {
    throw Error(ExitCode::kUsage,
                cat("the model reads ", plan.categorical_fields, " categorical field(s) (its highest, ",
                    plan.categorical_fields - 1, ", counting from 0); ", config.data_dir.string(), " holds ", fields));
  }
  return plan;
}

std::size_t evaluation_batch_size(const config::TrainConfig& config, const nn::ModelPlan& model) {
  constexpr std::size_t kLargeActivations = 16384;  // floats per sample; the MLP has ~1.5k, the CNN ~100k
  std::size_t floats = 0;
  for (const nn::PlannedNode& node : model.nodes) floats += nn::element_count(node.plan.output);
  if (floats < kLargeActivations) return config.eval_batch_size;
  return std::min(config.eval_batch_size, std::max<std::size_t>(config.batch_size, 256));
}

std::size_t largest_batch(const config::TrainConfig& config, const nn::ModelPlan& model) {
  return std::max(config.batch_size, evaluation_batch_size(config, model));
}

std::unique_ptr<nn::Model> make_model(const nn::ModelPlan& trainer_plan, std::size_t largest_batch,
                                      float label_smoothing, compute::Backend& backend) {
  return nn::make_graph_model(backend, trainer_plan, largest_batch, label_smoothing);
}

}  // namespace pstrain::run_common
