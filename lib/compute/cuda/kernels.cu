// The CUDA backend's kernels. Element-wise work is a grid-stride loop (64-bit indices, at most kMaxBlocks
// blocks); every reduction runs in a fixed order (no floating-point atomics), so results are bit-identical from
// run to run on the same GPU.
#include <cuda_runtime.h>
#include <math_constants.h>

#include <climits>

#include "compute/cuda/cuda_check.h"
#include "compute/cuda/grid_stride.cuh"
#include "compute/cuda/kernels.h"

namespace pstrain::compute::cuda {

namespace {

constexpr unsigned kFullWarp = 0xffffffffu;

__global__ void fill_kernel(float* data, std::int64_t count, float value) {
  for (std::int64_t i = first_index(); i < count; i += grid_stride()) data[i] = value;
}

__global__ void scale_kernel(float* data, std::int64_t count, float factor) {
  for (std::int64_t i = first_index(); i < count; i += grid_stride()) data[i] *= factor;
}

__global__ void add_row_bias_kernel(float* y, const float* bias, std::int64_t count, int cols) {
  for (std::int64_t i = first_index(); i < count; i += grid_stride()) y[i] += bias[i % cols];
}

// --- sum_rows: a block of kSumColumns x kSumLanes threads sums one chunk of rows for 32 columns (each lane
// every kSumLanes-th row, then the lanes in order); chunk partials are then summed in chunk order.
constexpr int kSumColumns = 32;
constexpr int kSumLanes = 8;
constexpr int kSumChunkRows = 256;
constexpr int kSumMaxChunks = 1024;

int sum_rows_chunk_rows(int rows) {
  const int chunks = (rows + kSumChunkRows - 1) / kSumChunkRows;
  return chunks <= kSumMaxChunks ? kSumChunkRows : (rows + kSumMaxChunks - 1) / kSumMaxChunks;
}

// Writes out[c] directly (applying beta) when partial is null, else partial[chunk, c].
__global__ void sum_rows_chunk_kernel(const float* x, int rows, int cols, int chunk_rows, float beta, float* out,
                                      float* partial) {
  __shared__ float sums[kSumLanes][kSumColumns + 1];
  const int c = blockIdx.x * kSumColumns + threadIdx.x;
  const int first = blockIdx.y * chunk_rows;
  const int last = min(rows, first + chunk_rows);
  float sum = 0.0f;
  if (c < cols) {
    for (int r = first + static_cast<int>(threadIdx.y); r < last; r += kSumLanes) {
      sum += x[static_cast<std::int64_t>(r) * cols + c];
    }
  }
  sums[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y == 0 && c < cols) {
    float total = sums[0][threadIdx.x];
    for (int lane = 1; lane < kSumLanes; ++lane) total += sums[lane][threadIdx.x];
    if (partial == nullptr) {
      out[c] = beta == 0.0f ? total : beta * out[c] + total;  // beta 0 overwrites, NaN included
    } else {
      partial[static_cast<std::int64_t>(blockIdx.y) * cols + c] = total;
    }
  }
}

__global__ void sum_rows_final_kernel(const float* partial, int chunks, int cols, float beta, float* out) {
  for (std::int64_t c = first_index(); c < cols; c += grid_stride()) {
    float total = 0.0f;
    for (int chunk = 0; chunk < chunks; ++chunk) total += partial[static_cast<std::int64_t>(chunk) * cols + c];
    out[c] = beta == 0.0f ? total : beta * out[c] + total;
  }
}

// --- activations: the CPU backend's definitions (cpu_backend.cc); relu lets NaN through.
__global__ void activation_forward_kernel(ActivationKind activation, const float* x, float* y, std::int64_t count) {
  for (std::int64_t i = first_index(); i < count; i += grid_stride()) {
    const float v = x[i];
    switch (activation) {
      case ActivationKind::kRelu: y[i] = v < 0.0f ? 0.0f : v; break;
      case ActivationKind::kTanh: y[i] = tanhf(v); break;
      case ActivationKind::kSigmoid: y[i] = 1.0f / (1.0f + expf(-v)); break;
    }
  }
}

__global__ void activation_backward_kernel(ActivationKind activation, const float* y, const float* dy, float* dx,
                                           std::int64_t count) {
  for (std::int64_t i = first_index(); i < count; i += grid_stride()) {
    const float out = y[i];
    const float upstream = dy[i];
    switch (activation) {
      case ActivationKind::kRelu: dx[i] = out > 0.0f ? upstream : 0.0f; break;
      case ActivationKind::kTanh: dx[i] = upstream * (1.0f - out * out); break;
      case ActivationKind::kSigmoid: dx[i] = upstream * out * (1.0f - out); break;
    }
  }
}

// --- softmax cross-entropy: one warp per row. Per-row results go to row_loss / row_outcome; one block then
// sums them in row order, so the totals do not depend on scheduling.
constexpr int kSoftmaxThreads = 256;
constexpr int kReduceThreads = 256;  // a power of two

// The arg-max of one row over a warp, the first maximum on ties (as the CPU backend): each lane scans its classes
// in increasing order, then the warp keeps the larger value and, on equal values, the lower index. Lane 0's answer
// is broadcast so that every lane agrees even when NaNs make the comparison inconsistent.
__device__ void warp_first_max(const float* x, int classes, int lane, float& best, int& best_index) {
  best = -CUDART_INF_F;
  best_index = INT_MAX;
  for (int c = lane; c < classes; c += 32) {
    const float v = x[c];
    // The CPU seeds with class 0 and replaces only on `>`: a NaN wins only as class 0 and is ignored anywhere
    // else. Without this skip a lane whose FIRST class is a NaN (c = 1..31) would keep it and lose its later,
    // real maximum, so the arg-max (the `correct` count) of a NaN row would differ from the CPU's.
    if (v != v && c != 0) continue;
    if (best_index == INT_MAX || v > best) {
      best = v;
      best_index = c;
    }
  }
  for (int offset = 16; offset > 0; offset >>= 1) {
    const float other = __shfl_xor_sync(kFullWarp, best, offset);
    const int other_index = __shfl_xor_sync(kFullWarp, best_index, offset);
    if (other > best || (other == best && other_index < best_index)) {
      best = other;
      best_index = other_index;
    }
  }
  best = __shfl_sync(kFullWarp, best, 0);
  best_index = __shfl_sync(kFullWarp, best_index, 0);
}

__global__ void softmax_rows_kernel(const float* logits, const std::int32_t* labels, float* dlogits, int rows,
                                    int classes, float inverse_rows, float label_smoothing, double* row_loss,
                                    int* row_outcome) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const std::int64_t warps_per_block = blockDim.x / 32;
  const std::int64_t warp_stride = static_cast<std::int64_t>(gridDim.x) * warps_per_block;
  // `row` is the same for the whole warp, so every lane takes the same path through the loop and the shuffles.
  for (std::int64_t row = blockIdx.x * warps_per_block + threadIdx.x / 32; row < rows; row += warp_stride) {
    const float* x = logits + row * classes;
    const int label = labels[row];

    float best = 0.0f;
    int best_index = 0;
    warp_first_max(x, classes, lane, best, best_index);

    // Shifting by the maximum keeps every exp() in (0, 1]; the sum is accumulated in double, as on the CPU. The
    // xor butterfly leaves the same sum in every lane.
    double exp_sum = 0.0;
    for (int c = lane; c < classes; c += 32) exp_sum += static_cast<double>(expf(x[c] - best));
    for (int offset = 16; offset > 0; offset >>= 1) exp_sum += __shfl_xor_sync(kFullWarp, exp_sum, offset);

    // Label smoothing adds e (x[label] - mean of the logits) to the loss (see backend.h).
    double logit_sum = 0.0;
    if (label_smoothing > 0.0f) {
      for (int c = lane; c < classes; c += 32) logit_sum += static_cast<double>(x[c]);
      for (int offset = 16; offset > 0; offset >>= 1) logit_sum += __shfl_xor_sync(kFullWarp, logit_sum, offset);
    }

    const bool valid = label >= 0 && label < classes;
    if (lane == 0) {
      if (valid) {
        row_loss[row] = log(exp_sum) + (static_cast<double>(best) - static_cast<double>(x[label]));
        if (label_smoothing > 0.0f) {
          row_loss[row] += label_smoothing * (static_cast<double>(x[label]) - logit_sum / classes);
        }
        row_outcome[row] = best_index == label ? 1 : 0;
      } else {
        row_loss[row] = 0.0;
        row_outcome[row] = -1;  // the host turns this into the CPU backend's error
      }
    }
    if (dlogits != nullptr && valid) {
      // (softmax - onehot) / rows, the gradient of the MEAN loss.
      const float scale = static_cast<float>(1.0 / exp_sum) * inverse_rows;
      float* gradient = dlogits + row * classes;
      for (int c = lane; c < classes; c += 32) {
        float g = expf(x[c] - best) * scale;
        if (label_smoothing > 0.0f) {
          g -= label_smoothing / static_cast<float>(classes) * inverse_rows;
          if (c == label) g -= (1.0f - label_smoothing) * inverse_rows;
        } else if (c == label) {
          g -= inverse_rows;
        }
        gradient[c] = g;
      }
    }
  }
}

__global__ void loss_totals_kernel(const double* row_loss, const int* row_outcome, const std::int32_t* labels, int rows,
                                   LossTotals* totals) {
  __shared__ double loss[kReduceThreads];
  __shared__ unsigned long long correct[kReduceThreads];
  __shared__ int first_bad[kReduceThreads];
  const int t = static_cast<int>(threadIdx.x);
  double loss_sum = 0.0;
  unsigned long long correct_count = 0;
  int bad = INT_MAX;
  for (int r = t; r < rows; r += kReduceThreads) {
    loss_sum += row_loss[r];
    const int outcome = row_outcome[r];
    if (outcome > 0) ++correct_count;
    if (outcome < 0 && r < bad) bad = r;
  }
  loss[t] = loss_sum;
  correct[t] = correct_count;
  first_bad[t] = bad;
  __syncthreads();
  for (int half = kReduceThreads / 2; half > 0; half >>= 1) {
    if (t < half) {
      loss[t] += loss[t + half];
      correct[t] += correct[t + half];
      first_bad[t] = min(first_bad[t], first_bad[t + half]);
    }
    __syncthreads();
  }
  if (t == 0) {
    totals->loss_sum = loss[0];
    totals->correct = correct[0];
    totals->first_bad_row = first_bad[0] == INT_MAX ? -1 : first_bad[0];
    totals->first_bad_label = first_bad[0] == INT_MAX ? 0 : labels[first_bad[0]];
  }
}

// --- convolution and pooling: one thread per output element, the index arithmetic in index_math.h.
__global__ void im2col_kernel(const float* x, float* columns, std::int64_t count, ConvShape shape) {
  for (std::int64_t i = first_index(); i < count; i += grid_stride()) columns[i] = im2col_value(x, i, shape);
}

__global__ void col2im_kernel(const float* columns, float* dx, std::int64_t count, ConvShape shape) {
  for (std::int64_t j = first_index(); j < count; j += grid_stride()) dx[j] = col2im_value(columns, j, shape);
}

__global__ void max_pool_forward_kernel(const float* x, float* y, std::int32_t* argmax, std::int64_t count,
                                        PoolShape shape) {
  for (std::int64_t i = first_index(); i < count; i += grid_stride()) {
    std::int64_t index = 0;
    y[i] = max_pool_value(x, i, shape, &index);
    argmax[i] = static_cast<std::int32_t>(index);  // the caller checked that x's size fits in int32
  }
}

__global__ void max_pool_backward_kernel(const float* dy, const std::int32_t* argmax, float* dx, std::int64_t count,
                                         PoolShape shape) {
  for (std::int64_t j = first_index(); j < count; j += grid_stride()) dx[j] = max_pool_gradient(dy, argmax, j, shape);
}

}  // namespace

void launch_fill(cudaStream_t stream, float* data, std::size_t count, float value) {
  if (count == 0) return;
  const auto n = static_cast<std::int64_t>(count);
  fill_kernel<<<blocks_for(n), kThreads, 0, stream>>>(data, n, value);
  CUDA_CHECK(cudaGetLastError());
}

void launch_scale(cudaStream_t stream, float* data, std::size_t count, float factor) {
  if (count == 0) return;
  const auto n = static_cast<std::int64_t>(count);
  scale_kernel<<<blocks_for(n), kThreads, 0, stream>>>(data, n, factor);
  CUDA_CHECK(cudaGetLastError());
}

void launch_add_row_bias(cudaStream_t stream, float* y, const float* bias, int rows, int cols) {
  if (rows <= 0 || cols <= 0) return;
  const std::int64_t n = static_cast<std::int64_t>(rows) * cols;
  add_row_bias_kernel<<<blocks_for(n), kThreads, 0, stream>>>(y, bias, n, cols);
  CUDA_CHECK(cudaGetLastError());
}

std::size_t sum_rows_scratch_floats(int rows, int cols) {
  if (rows <= 0 || cols <= 0) return 0;
  const int chunk_rows = sum_rows_chunk_rows(rows);
  const int chunks = (rows + chunk_rows - 1) / chunk_rows;
  return chunks > 1 ? static_cast<std::size_t>(chunks) * static_cast<std::size_t>(cols) : 0;
}

void launch_sum_rows(cudaStream_t stream, const float* x, float* out, int rows, int cols, float beta, float* scratch) {
  if (cols <= 0) return;
  if (rows <= 0) {  // an empty sum: out = beta * out, where beta 0 overwrites
    if (beta == 0.0f) {
      launch_fill(stream, out, static_cast<std::size_t>(cols), 0.0f);
    } else if (beta != 1.0f) {
      launch_scale(stream, out, static_cast<std::size_t>(cols), beta);
    }
    return;
  }
  const int chunk_rows = sum_rows_chunk_rows(rows);
  const int chunks = (rows + chunk_rows - 1) / chunk_rows;
  const dim3 grid(static_cast<unsigned>((cols + kSumColumns - 1) / kSumColumns), static_cast<unsigned>(chunks));
  const dim3 block(kSumColumns, kSumLanes);
  float* partial = chunks > 1 ? scratch : nullptr;
  sum_rows_chunk_kernel<<<grid, block, 0, stream>>>(x, rows, cols, chunk_rows, beta, out, partial);
  CUDA_CHECK(cudaGetLastError());
  if (partial != nullptr) {
    sum_rows_final_kernel<<<blocks_for(cols), kThreads, 0, stream>>>(partial, chunks, cols, beta, out);
    CUDA_CHECK(cudaGetLastError());
  }
}

void launch_activation_forward(cudaStream_t stream, ActivationKind activation, const float* x, float* y,
                               std::size_t count) {
  if (count == 0) return;
  const auto n = static_cast<std::int64_t>(count);
  activation_forward_kernel<<<blocks_for(n), kThreads, 0, stream>>>(activation, x, y, n);
  CUDA_CHECK(cudaGetLastError());
}

void launch_activation_backward(cudaStream_t stream, ActivationKind activation, const float* y, const float* dy,
                                float* dx, std::size_t count) {
  if (count == 0) return;
  const auto n = static_cast<std::int64_t>(count);
  activation_backward_kernel<<<blocks_for(n), kThreads, 0, stream>>>(activation, y, dy, dx, n);
  CUDA_CHECK(cudaGetLastError());
}

void launch_softmax_cross_entropy(cudaStream_t stream, const float* logits, const std::int32_t* labels, float* dlogits,
                                  int rows, int classes, float label_smoothing, double* row_loss, int* row_outcome,
                                  LossTotals* totals) {
  if (rows <= 0 || classes <= 0) return;
  constexpr int kWarpsPerBlock = kSoftmaxThreads / 32;
  const std::int64_t blocks = (static_cast<std::int64_t>(rows) + kWarpsPerBlock - 1) / kWarpsPerBlock;
  const auto grid = static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks);
  const float inverse_rows = 1.0f / static_cast<float>(rows);
  softmax_rows_kernel<<<grid, kSoftmaxThreads, 0, stream>>>(logits, labels, dlogits, rows, classes, inverse_rows,
                                                            label_smoothing, row_loss, row_outcome);
  CUDA_CHECK(cudaGetLastError());
  loss_totals_kernel<<<1, kReduceThreads, 0, stream>>>(row_loss, row_outcome, labels, rows, totals);
  CUDA_CHECK(cudaGetLastError());
}

void launch_im2col(cudaStream_t stream, const float* x, float* columns, const ConvShape& shape, int batch) {
  const std::int64_t n = static_cast<std::int64_t>(batch) * shape.out_height * shape.out_width * shape.column_width;
  if (n <= 0) return;
  im2col_kernel<<<blocks_for(n), kThreads, 0, stream>>>(x, columns, n, shape);
  CUDA_CHECK(cudaGetLastError());
}

void launch_col2im(cudaStream_t stream, const float* columns, float* dx, const ConvShape& shape, int batch) {
  const std::int64_t n = static_cast<std::int64_t>(batch) * shape.height * shape.width * shape.channels;
  if (n <= 0) return;
  col2im_kernel<<<blocks_for(n), kThreads, 0, stream>>>(columns, dx, n, shape);
  CUDA_CHECK(cudaGetLastError());
}

void launch_max_pool_forward(cudaStream_t stream, const float* x, float* y, std::int32_t* argmax,
                             const PoolShape& shape, int batch) {
  const std::int64_t n = static_cast<std::int64_t>(batch) * shape.out_height * shape.out_width * shape.channels;
  if (n <= 0) return;
  max_pool_forward_kernel<<<blocks_for(n), kThreads, 0, stream>>>(x, y, argmax, n, shape);
  CUDA_CHECK(cudaGetLastError());
}

void launch_max_pool_backward(cudaStream_t stream, const float* dy, const std::int32_t* argmax, float* dx,
                              const PoolShape& shape, int batch) {
  const std::int64_t n = static_cast<std::int64_t>(batch) * shape.height * shape.width * shape.channels;
  if (n <= 0) return;
  max_pool_backward_kernel<<<blocks_for(n), kThreads, 0, stream>>>(dy, argmax, dx, n, shape);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace pstrain::compute::cuda
