// The CUDA backend's kernels for the layers beyond dense and convolution (see kernels.h): element-wise helpers,
// average and global pooling, batch normalisation, dropout masks and embedding rows. Reductions run in a fixed
// order, so results are bit-identical from run to run on the same GPU; sums of many terms are kept in double,
// as on the CPU backend.
#include <cuda_runtime.h>

#include "compute/cuda/cuda_check.h"
#include "compute/cuda/grid_stride.cuh"
#include "compute/cuda/kernels.h"
#include "core/counter_random.h"

namespace pstrain::compute::cuda {

namespace {

__global__ void axpy_kernel(float alpha, const float* x, float* y, std::int64_t count) {
  for (std::int64_t i = first_index(); i < count; i += grid_stride()) y[i] += alpha * x[i];
}

__global__ void add_kernel(const float* a, const float* b, float* out, std::int64_t count) {
  for (std::int64_t i = first_index(); i < count; i += grid_stride()) out[i] = a[i] + b[i];
}

__global__ void multiply_kernel(const float* a, const float* b, float* out, std::int64_t count) {
  for (std::int64_t i = first_index(); i < count; i += grid_stride()) out[i] = a[i] * b[i];
}

// One thread per output element, the window summed in (ky, kx) order as on the CPU.
__global__ void avg_pool_forward_kernel(const float* x, float* y, std::int64_t count, PoolShape s) {
  const float inverse_area = 1.0f / static_cast<float>(s.window * s.window);
  for (std::int64_t i = first_index(); i < count; i += grid_stride()) {
    const NhwcPoint p = nhwc_point(i, s.out_height, s.out_width, s.channels);
    float sum = 0.0f;
    for (int ky = 0; ky < s.window; ++ky) {
      for (int kx = 0; kx < s.window; ++kx) {
        const int y_in = p.y * s.stride + ky;
        const int x_in = p.x * s.stride + kx;
        sum += x[((p.n * s.height + y_in) * s.width + x_in) * s.channels + p.c];
      }
    }
    y[i] = sum * inverse_area;
  }
}

// One thread per input element: the windows that cover it, in output order (no atomics).
__global__ void avg_pool_backward_kernel(const float* dy, float* dx, std::int64_t count, PoolShape s) {
  const float inverse_area = 1.0f / static_cast<float>(s.window * s.window);
  for (std::int64_t i = first_index(); i < count; i += grid_stride()) {
    const NhwcPoint p = nhwc_point(i, s.height, s.width, s.channels);
    float sum = 0.0f;
    for (int oy = 0; oy < s.out_height; ++oy) {
      if (p.y < oy * s.stride || p.y >= oy * s.stride + s.window) continue;
      for (int ox = 0; ox < s.out_width; ++ox) {
        if (p.x < ox * s.stride || p.x >= ox * s.stride + s.window) continue;
        sum += dy[((p.n * s.out_height + oy) * s.out_width + ox) * s.channels + p.c] * inverse_area;
      }
    }
    dx[i] = sum;
  }
}

__global__ void spatial_mean_kernel(const float* x, float* y, std::int64_t count, int pixels, int channels) {
  const float inverse_pixels = 1.0f / static_cast<float>(pixels);
  for (std::int64_t i = first_index(); i < count; i += grid_stride()) {
    const std::int64_t n = i / channels;
    const int c = static_cast<int>(i % channels);
    float sum = 0.0f;
    for (int p = 0; p < pixels; ++p) sum += x[(n * pixels + p) * channels + c];
    y[i] = sum * inverse_pixels;
  }
}

__global__ void spatial_mean_backward_kernel(const float* dy, float* dx, std::int64_t count, int pixels, int channels) {
  const float inverse_pixels = 1.0f / static_cast<float>(pixels);
  for (std::int64_t i = first_index(); i < count; i += grid_stride()) {
    const int c = static_cast<int>(i % channels);
    const std::int64_t n = i / (static_cast<std::int64_t>(pixels) * channels);
    dx[i] = dy[n * channels + c] * inverse_pixels;
  }
}

// Block-wide sum of one double per thread, in a fixed tree order; every thread gets the total.
__device__ double block_sum(double value, double* shared) {
  shared[threadIdx.x] = value;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half >>= 1) {
    if (static_cast<int>(threadIdx.x) < half) shared[threadIdx.x] += shared[threadIdx.x + half];
    __syncthreads();
  }
  const double total = shared[0];
  __syncthreads();
  return total;
}

// One block per channel (blockIdx.x); its threads stride over the rows.
__global__ void batch_norm_training_kernel(const float* x, float* y, BatchNormPointers t, float momentum, float epsilon,
                                           int rows, int channels) {
  __shared__ double shared[kThreads];
  const int c = blockIdx.x;
  double sum = 0.0;
  for (int r = threadIdx.x; r < rows; r += blockDim.x) sum += x[static_cast<std::int64_t>(r) * channels + c];
  const double mean = block_sum(sum, shared) / rows;
  double squares = 0.0;
  for (int r = threadIdx.x; r < rows; r += blockDim.x) {
    const double centred = x[static_cast<std::int64_t>(r) * channels + c] - mean;
    squares += centred * centred;
  }
  const double square_sum = block_sum(squares, shared);
  const double variance = square_sum / rows;
  const float mean_f = static_cast<float>(mean);
  const float inv_std = static_cast<float>(1.0 / sqrt(variance + epsilon));
  if (threadIdx.x == 0) {
    t.batch_mean[c] = mean_f;
    t.batch_inv_std[c] = inv_std;
    const double unbiased = rows > 1 ? square_sum / (rows - 1) : variance;
    t.running_mean[c] = (1.0f - momentum) * t.running_mean[c] + momentum * mean_f;
    t.running_var[c] = (1.0f - momentum) * t.running_var[c] + momentum * static_cast<float>(unbiased);
  }
  const float gamma = t.gamma[c];
  const float beta = t.beta[c];
  for (int r = threadIdx.x; r < rows; r += blockDim.x) {
    const std::int64_t i = static_cast<std::int64_t>(r) * channels + c;
    y[i] = gamma * ((x[i] - mean_f) * inv_std) + beta;
  }
}

__global__ void batch_norm_inference_kernel(const float* x, float* y, BatchNormPointers t, float epsilon,
                                            std::int64_t count, int channels) {
  for (std::int64_t i = first_index(); i < count; i += grid_stride()) {
    const int c = static_cast<int>(i % channels);
    const float inv_std = static_cast<float>(1.0 / sqrt(static_cast<double>(t.running_var[c]) + epsilon));
    y[i] = t.gamma[c] * ((x[i] - t.running_mean[c]) * inv_std) + t.beta[c];
  }
}

__global__ void batch_norm_backward_kernel(const float* x, const float* dy, BatchNormPointers t, float* dx,
                                           float* dgamma, float* dbeta, int rows, int channels) {
  __shared__ double shared[kThreads];
  const int c = blockIdx.x;
  const float mean = t.batch_mean[c];
  const float inv_std = t.batch_inv_std[c];
  double sum_dy = 0.0;
  double sum_dy_xhat = 0.0;
  for (int r = threadIdx.x; r < rows; r += blockDim.x) {
    const std::int64_t i = static_cast<std::int64_t>(r) * channels + c;
    sum_dy += dy[i];
    sum_dy_xhat += static_cast<double>(dy[i]) * ((x[i] - mean) * inv_std);
  }
  const float total_dy = static_cast<float>(block_sum(sum_dy, shared));
  const float total_dy_xhat = static_cast<float>(block_sum(sum_dy_xhat, shared));
  if (threadIdx.x == 0) {
    dbeta[c] = total_dy;
    dgamma[c] = total_dy_xhat;
  }
  const float factor = t.gamma[c] * inv_std * (1.0f / static_cast<float>(rows));
  for (int r = threadIdx.x; r < rows; r += blockDim.x) {
    const std::int64_t i = static_cast<std::int64_t>(r) * channels + c;
    const float xhat = (x[i] - mean) * inv_std;
    dx[i] = factor * (static_cast<float>(rows) * dy[i] - total_dy - xhat * total_dy_xhat);
  }
}

__global__ void dropout_mask_kernel(float* mask, std::int64_t count, float rate, std::uint64_t key) {
  const float keep_scale = 1.0f / (1.0f - rate);
  for (std::int64_t i = first_index(); i < count; i += grid_stride()) {
    mask[i] = counter_uniform(key, static_cast<std::uint64_t>(i)) >= rate ? keep_scale : 0.0f;
  }
}

__device__ inline int table_row(float id, int table_rows) {
  const int row = static_cast<int>(id);
  return (id >= 0.0f && static_cast<float>(row) == id && row < table_rows) ? row : -1;
}

__global__ void gather_rows_kernel(const float* table, const float* ids, float* out, std::int64_t count, int dim,
                                   int table_rows, int* bad_ids) {
  for (std::int64_t i = first_index(); i < count; i += grid_stride()) {
    const std::int64_t r = i / dim;
    const int d = static_cast<int>(i % dim);
    const int row = table_row(ids[r], table_rows);
    if (row < 0) {
      out[i] = 0.0f;
      if (d == 0) atomicAdd(bad_ids, 1);  // a count, not a float sum: order does not matter
    } else {
      out[i] = table[static_cast<std::int64_t>(row) * dim + d];
    }
  }
}

__global__ void scatter_add_rows_kernel(const float* row_gradients, const float* ids, float* table_gradient, int count,
                                        int dim, int table_rows) {
  for (std::int64_t d = first_index(); d < dim; d += grid_stride()) {
    for (int r = 0; r < count; ++r) {
      const int row = table_row(ids[r], table_rows);
      if (row >= 0)
        table_gradient[static_cast<std::int64_t>(row) * dim + d] +=
            row_gradients[static_cast<std::int64_t>(r) * dim + d];
    }
  }
}

__global__ void fill_zero_kernel(float* data, std::int64_t count) {
  for (std::int64_t i = first_index(); i < count; i += grid_stride()) data[i] = 0.0f;
}

}  // namespace

void launch_axpy(cudaStream_t stream, float alpha, const float* x, float* y, std::size_t count) {
  if (count == 0) return;
  const auto n = static_cast<std::int64_t>(count);
  axpy_kernel<<<blocks_for(n), kThreads, 0, stream>>>(alpha, x, y, n);
  CUDA_CHECK(cudaGetLastError());
}

void launch_add(cudaStream_t stream, const float* a, const float* b, float* out, std::size_t count) {
  if (count == 0) return;
  const auto n = static_cast<std::int64_t>(count);
  add_kernel<<<blocks_for(n), kThreads, 0, stream>>>(a, b, out, n);
  CUDA_CHECK(cudaGetLastError());
}

void launch_multiply(cudaStream_t stream, const float* a, const float* b, float* out, std::size_t count) {
  if (count == 0) return;
  const auto n = static_cast<std::int64_t>(count);
  multiply_kernel<<<blocks_for(n), kThreads, 0, stream>>>(a, b, out, n);
  CUDA_CHECK(cudaGetLastError());
}

void launch_avg_pool_forward(cudaStream_t stream, const float* x, float* y, const PoolShape& shape, int batch) {
  const std::int64_t n = static_cast<std::int64_t>(batch) * shape.out_height * shape.out_width * shape.channels;
  if (n <= 0) return;
  avg_pool_forward_kernel<<<blocks_for(n), kThreads, 0, stream>>>(x, y, n, shape);
  CUDA_CHECK(cudaGetLastError());
}

void launch_avg_pool_backward(cudaStream_t stream, const float* dy, float* dx, const PoolShape& shape, int batch) {
  const std::int64_t n = static_cast<std::int64_t>(batch) * shape.height * shape.width * shape.channels;
  if (n <= 0) return;
  avg_pool_backward_kernel<<<blocks_for(n), kThreads, 0, stream>>>(dy, dx, n, shape);
  CUDA_CHECK(cudaGetLastError());
}

void launch_spatial_mean(cudaStream_t stream, const float* x, float* y, int batch, int pixels, int channels) {
  const std::int64_t n = static_cast<std::int64_t>(batch) * channels;
  if (n <= 0 || pixels <= 0) return;
  spatial_mean_kernel<<<blocks_for(n), kThreads, 0, stream>>>(x, y, n, pixels, channels);
  CUDA_CHECK(cudaGetLastError());
}

void launch_spatial_mean_backward(cudaStream_t stream, const float* dy, float* dx, int batch, int pixels,
                                  int channels) {
  const std::int64_t n = static_cast<std::int64_t>(batch) * pixels * channels;
  if (n <= 0) return;
  spatial_mean_backward_kernel<<<blocks_for(n), kThreads, 0, stream>>>(dy, dx, n, pixels, channels);
  CUDA_CHECK(cudaGetLastError());
}

void launch_batch_norm_training(cudaStream_t stream, const float* x, float* y, const BatchNormPointers& tensors,
                                float momentum, float epsilon, int rows, int channels) {
  if (rows <= 0 || channels <= 0) return;
  batch_norm_training_kernel<<<channels, kThreads, 0, stream>>>(x, y, tensors, momentum, epsilon, rows, channels);
  CUDA_CHECK(cudaGetLastError());
}

void launch_batch_norm_inference(cudaStream_t stream, const float* x, float* y, const BatchNormPointers& tensors,
                                 float epsilon, int rows, int channels) {
  const std::int64_t n = static_cast<std::int64_t>(rows) * channels;
  if (n <= 0) return;
  batch_norm_inference_kernel<<<blocks_for(n), kThreads, 0, stream>>>(x, y, tensors, epsilon, n, channels);
  CUDA_CHECK(cudaGetLastError());
}

void launch_batch_norm_backward(cudaStream_t stream, const float* x, const float* dy, const BatchNormPointers& tensors,
                                float* dx, float* dgamma, float* dbeta, int rows, int channels) {
  if (rows <= 0 || channels <= 0) return;
  batch_norm_backward_kernel<<<channels, kThreads, 0, stream>>>(x, dy, tensors, dx, dgamma, dbeta, rows, channels);
  CUDA_CHECK(cudaGetLastError());
}

void launch_dropout_mask(cudaStream_t stream, float* mask, std::size_t count, float rate, std::uint64_t key) {
  if (count == 0) return;
  const auto n = static_cast<std::int64_t>(count);
  dropout_mask_kernel<<<blocks_for(n), kThreads, 0, stream>>>(mask, n, rate, key);
  CUDA_CHECK(cudaGetLastError());
}

void launch_gather_rows(cudaStream_t stream, const float* table, const float* ids, float* out, int count, int dim,
                        int table_rows, int* bad_ids) {
  const std::int64_t n = static_cast<std::int64_t>(count) * dim;
  if (n <= 0) return;
  gather_rows_kernel<<<blocks_for(n), kThreads, 0, stream>>>(table, ids, out, n, dim, table_rows, bad_ids);
  CUDA_CHECK(cudaGetLastError());
}

void launch_scatter_add_rows(cudaStream_t stream, const float* row_gradients, const float* ids, float* table_gradient,
                             int count, int dim, int table_rows) {
  const std::int64_t table_size = static_cast<std::int64_t>(table_rows) * dim;
  if (table_size <= 0) return;
  fill_zero_kernel<<<blocks_for(table_size), kThreads, 0, stream>>>(table_gradient, table_size);
  CUDA_CHECK(cudaGetLastError());
  if (count <= 0) return;
  scatter_add_rows_kernel<<<blocks_for(dim), kThreads, 0, stream>>>(row_gradients, ids, table_gradient, count, dim,
                                                                    table_rows);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace pstrain::compute::cuda
