#pragma once
// What a rank computes with: its compute backend (--device, and which GPU) and its model (--model).
#include <memory>
#include <string>

#include "compute/backend.h"
#include "nn/model.h"
#include "train/job_context.h"

namespace pstrain::train {

// Servers always get the CPU backend (they only hold slices). A trainer gets:
//   --device cpu: the CPU backend;
//   --device gpu: GPU (local trainer rank mod GPUs on this node), or Error(kUsage) naming the host when the
//                 build has no CUDA or the node has no GPU;
//   --device auto: a GPU when this node has one, else the CPU.
std::unique_ptr<compute::Backend> make_backend(const JobContext& job);

// Samples per evaluation batch: --eval-batch-size, but for a CNN at most max(--batch-size, 256), since every
// sample of a batch needs its im2col columns and activations (~0.5 MB per Fashion-MNIST image).
std::size_t evaluation_batch_size(const TrainConfig& config);

// The MLP or the CNN over the data's sample shape. Throws Error(kUsage) when the model does not fit the data
// (a CNN on samples that are not images).
std::unique_ptr<nn::Model> make_model(const JobContext& job, compute::Backend& backend);

}  // namespace pstrain::train
