#pragma once
// Host-side launchers for the CUDA backend's kernels (kernels.cu). Each one queues its kernel(s) on `stream`,
// checks the launch with cudaGetLastError, and returns without waiting. Sizes are validated by the caller
// (cuda_backend.cc); a launcher with nothing to do launches nothing.
//
// nvcc compiles kernels.cu as C++17 and this header is all it sees of pstrain: it must not include
// compute/backend.h (C++20) nor anything beyond the CUDA runtime and the standard library.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "compute/cuda/index_math.h"

namespace pstrain::compute::cuda {

// compute::Activation, restated for the kernels (cuda_backend.cc maps one to the other).
enum class ActivationKind : int { kRelu, kTanh, kSigmoid };

void launch_fill(cudaStream_t stream, float* data, std::size_t count, float value);
void launch_scale(cudaStream_t stream, float* data, std::size_t count, float factor);
void launch_add_row_bias(cudaStream_t stream, float* y, const float* bias, int rows, int cols);

// sum_rows reduces row blocks into partial sums first, then the partials in a fixed order: deterministic, and
// parallel when there are many rows and few columns (a convolution's bias gradient). `scratch` must hold
// sum_rows_scratch_floats(rows, cols) floats (0: none needed).
std::size_t sum_rows_scratch_floats(int rows, int cols);
void launch_sum_rows(cudaStream_t stream, const float* x, float* out, int rows, int cols, float beta, float* scratch);

void launch_activation_forward(cudaStream_t stream, ActivationKind activation, const float* x, float* y,
                               std::size_t count);
void launch_activation_backward(cudaStream_t stream, ActivationKind activation, const float* y, const float* dy,
                                float* dx, std::size_t count);

// What softmax_cross_entropy reduces on the device and copies back in one small transfer.
struct LossTotals {
  double loss_sum;
  unsigned long long correct;
  int first_bad_row;  // the first row whose label is outside [0, classes), or -1
  int first_bad_label;
};
// Scratch: rows doubles (per-row losses) and rows ints (per-row outcome), plus the device LossTotals.
void launch_softmax_cross_entropy(cudaStream_t stream, const float* logits, const std::int32_t* labels, float* dlogits,
                                  int rows, int classes, float label_smoothing, double* row_loss, int* row_outcome,
                                  LossTotals* totals);

void launch_im2col(cudaStream_t stream, const float* x, float* columns, const ConvShape& shape, int batch);
void launch_col2im(cudaStream_t stream, const float* columns, float* dx, const ConvShape& shape, int batch);
void launch_max_pool_forward(cudaStream_t stream, const float* x, float* y, std::int32_t* argmax,
                             const PoolShape& shape, int batch);
void launch_max_pool_backward(cudaStream_t stream, const float* dy, const std::int32_t* argmax, float* dx,
                              const PoolShape& shape, int batch);

// Layer kernels (layer_kernels.cu); the operations are those of compute/backend.h with the same names.
void launch_axpy(cudaStream_t stream, float alpha, const float* x, float* y, std::size_t count);
void launch_add(cudaStream_t stream, const float* a, const float* b, float* out, std::size_t count);
void launch_multiply(cudaStream_t stream, const float* a, const float* b, float* out, std::size_t count);
void launch_avg_pool_forward(cudaStream_t stream, const float* x, float* y, const PoolShape& shape, int batch);
void launch_avg_pool_backward(cudaStream_t stream, const float* dy, float* dx, const PoolShape& shape, int batch);
void launch_spatial_mean(cudaStream_t stream, const float* x, float* y, int batch, int pixels, int channels);
void launch_spatial_mean_backward(cudaStream_t stream, const float* dy, float* dx, int batch, int pixels, int channels);
struct BatchNormPointers {
  const float* gamma;
  const float* beta;
  float* running_mean;
  float* running_var;
  float* batch_mean;
  float* batch_inv_std;
};
// One block per channel reduces its rows in a fixed order (deterministic), in double.
void launch_batch_norm_training(cudaStream_t stream, const float* x, float* y, const BatchNormPointers& tensors,
                                float momentum, float epsilon, int rows, int channels);
void launch_batch_norm_inference(cudaStream_t stream, const float* x, float* y, const BatchNormPointers& tensors,
                                 float epsilon, int rows, int channels);
void launch_batch_norm_backward(cudaStream_t stream, const float* x, const float* dy, const BatchNormPointers& tensors,
                                float* dx, float* dgamma, float* dbeta, int rows, int channels);
void launch_dropout_mask(cudaStream_t stream, float* mask, std::size_t count, float rate, std::uint64_t key);
// Ids that are not integers in [0, table_rows) are counted into *bad_ids (device memory) and their rows zeroed.
void launch_gather_rows(cudaStream_t stream, const float* table, const float* ids, float* out, int count, int dim,
                        int table_rows, int* bad_ids);
// One thread per table column walks the ids in order: deterministic, no atomics.
void launch_scatter_add_rows(cudaStream_t stream, const float* row_gradients, const float* ids, float* table_gradient,
                             int count, int dim, int table_rows);

}  // namespace pstrain::compute::cuda
