#include "train/model_factory.h"

#include <unistd.h>

#include <algorithm>

#include "compute/opaque_backend.h"
#include "core/error.h"
#include "core/log.h"

namespace pstrain::train {

namespace {

std::string host_name() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
}

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  std::string text;
  for (const std::uint64_t extent : shape) text += (text.empty() ? "" : " x ") + std::to_string(extent);
  return text.empty() ? "(none)" : text;
}

}  // namespace

std::unique_ptr<compute::Backend> make_backend(const JobContext& job) {
  const std::string& device = job.config.device;
  if (job.layout.is_server()) return compute::make_cpu_backend();
  if (job.config.test_opaque_backend) return compute::make_opaque_cpu_backend();
  if (device == "cpu") return compute::make_cpu_backend();
  const int gpus = compute::gpu_count();
  if (gpus == 0) {
    if (device == "auto") return compute::make_cpu_backend();
    throw Error(ExitCode::kUsage,
                cat("--device gpu: ", job.layout.describe(), " on ", host_name(), " sees no GPU (",
                    compute::built_with_cuda() ? "no CUDA device or driver on this node"
                                               : "this pstrain was built without CUDA",
                    "); use --device cpu or auto"));
  }
  const int ordinal = job.layout.local_trainer_rank % gpus;
  if (job.layout.local_trainer_rank >= gpus) {
    log_warning(job.layout.describe(), " shares GPU ", ordinal, " with another trainer: this node has ", gpus,
                " GPU(s) for more trainers");
  }
  return compute::make_gpu_backend(ordinal);
}

std::size_t evaluation_batch_size(const TrainConfig& config) {
  if (config.model != "cnn") return config.eval_batch_size;
  return std::min(config.eval_batch_size, std::max<std::size_t>(config.batch_size, 256));
}

std::unique_ptr<nn::Model> make_model(const JobContext& job, compute::Backend& backend) {
  const TrainConfig& config = job.config;
  const data::ShardMeta& meta = job.data.meta;
  const std::size_t max_batch = std::max(config.batch_size, evaluation_batch_size(config));
  if (config.model == "mlp") {
    nn::MlpSpec spec;
    spec.input_size = meta.sample_size();
    spec.hidden = config.hidden;
    spec.num_classes = meta.num_classes;
    spec.activation = config.activation;
    spec.max_batch = max_batch;
    return nn::make_mlp(backend, spec);
  }
  PSTRAIN_ASSERT(config.model == "cnn", "model ", config.model);
  const auto& shape = meta.sample_shape;
  if (shape.size() != 2 && shape.size() != 3) {
    throw Error(ExitCode::kUsage, cat("--model cnn needs image samples (height x width, or height x width x "
                                      "channels); ", job.config.data_dir.string(), " holds samples of shape ",
                                      shape_text(shape)));
  }
  nn::CnnSpec spec;
  spec.height = shape[0];
  spec.width = shape[1];
  spec.channels = shape.size() == 3 ? shape[2] : 1;
  spec.conv_filters = config.conv_filters;
  spec.kernel_size = config.kernel_size;
  spec.hidden = config.hidden;
  spec.num_classes = meta.num_classes;
  spec.activation = config.activation;
  spec.max_batch = max_batch;
  return nn::make_cnn(backend, spec);
}

}  // namespace pstrain::train
