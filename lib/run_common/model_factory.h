#pragma once
// What a rank computes with: its compute backend (--device, and which GPU) and its model (--model or
// --model-file), planned against the data's sample shape.
#include <memory>
#include <string>

#include "comm/layout.h"
#include "compute/backend.h"
#include "config/train_config.h"
#include "data/shard.h"
#include "nn/model.h"
#include "nn/model_plan.h"
#include "run_common/run_hooks.h"

namespace pstrain::run_common {

// Servers always get the CPU backend (they only hold slices). A trainer gets:
//   --device cpu: the CPU backend;
//   --device gpu: GPU (local trainer rank mod GPUs on this node), or Error(kUsage) naming the host when the
//                 build has no CUDA or the node has no GPU;
//   --device auto: a GPU when this node has one, else the CPU;
// unless `hooks` give one in place of any of these (RunHooks::trainer_backend).
std::unique_ptr<compute::Backend> make_backend(const std::string& device, const comm::WorldLayout& layout,
                                               RunHooks& hooks);

// The model description (the --model-file, or the preset's text from its flags) planned for samples of `meta`'s
// shape and classes: no backend, so every rank can afford it. Throws Error(kUsage) naming the file, the line and
// the problem when the description is invalid or does not fit the data.
nn::ModelPlan plan_job_model(const config::TrainConfig& config, const data::ShardMeta& meta);

// Samples per evaluation batch: --eval-batch-size, but for models with large activations (convolutions: ~0.5 MB
// per Fashion-MNIST image for im2col columns and outputs) at most max(--batch-size, 256).
std::size_t evaluation_batch_size(const config::TrainConfig& config, const nn::ModelPlan& model);

// The most samples the model computes at once: a training or an evaluation batch.
std::size_t largest_batch(const config::TrainConfig& config, const nn::ModelPlan& model);

// A trainer's model over its backend, from its plan (the job's model with row caches for the tables the servers
// hold by rows: run_common/table_layout.h trainer_model_plan), for batches of up to `largest_batch` samples.
std::unique_ptr<nn::Model> make_model(const nn::ModelPlan& trainer_plan, std::size_t largest_batch,
                                      float label_smoothing, compute::Backend& backend);

}  // namespace pstrain::run_common
