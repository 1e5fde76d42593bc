#pragma once
// The CUDA backend: buffers are device memory (cudaMalloc), matrix products go to cuBLAS (fp32, no TF32),
// convolutions to cuDNN where it is there (cudnn_convolution.h; else im2col + cuBLAS), everything else to the
// kernels in kernels.cu. All work is queued on ONE non-blocking stream owned by the
// backend (also handed to NCCL through native_stream()), so operations run in the order they were called.
//
// Synchronisation, i.e. when the host waits for the stream:
//  - copy_to_host and softmax_cross_entropy (its loss and count) return with their results in host memory;
//  - copy_from_host from pageable memory returns once the copy is done, so the caller may reuse the source;
//  - copy_from_host from page-locked memory (allocate_host_staging) only queues the copy: the source must stay
//    unchanged until the next synchronising call (synchronize, copy_to_host, softmax_cross_entropy);
//  - release_bytes and release_host_staging wait for the stream first, so memory is never freed under queued work;
//  - everything else (fill, gemm, kernels, device-to-device work) only queues.
//
// Every operation first makes this backend's device current on the calling thread, so a backend may be used
// from a thread other than the one that made it. One backend must not be used from two threads at once.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "compute/backend.h"
#include "compute/cuda/cublas_api.h"
#include "compute/cuda/cudnn_convolution.h"
#include "compute/cuda/kernels.h"
#include "compute/cuda/step_timeline.h"

namespace pstrain::compute::cuda {

// RAII owners; their destructors log (never throw) when the release call fails.
class Stream {
 public:
  Stream();  // non-blocking: never synchronises with the legacy default stream
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

class CublasHandle {
 public:
  explicit CublasHandle(cudaStream_t stream);
  ~CublasHandle();
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t get() const { return handle_; }
  const CublasApi& api() const { return api_; }

 private:
  const CublasApi& api_;
  cublasHandle_t handle_ = nullptr;
};

// Device memory that only grows, for the temporaries of sum_rows and softmax_cross_entropy. Work queued on the
// one stream uses it in order, so one region serves every operation.
class DeviceScratch {
 public:
  DeviceScratch() = default;
  ~DeviceScratch();
  DeviceScratch(const DeviceScratch&) = delete;
  DeviceScratch& operator=(const DeviceScratch&) = delete;
  // At least `bytes` bytes (256-byte aligned). Growing waits for `stream` before freeing the old region.
  void* reserve(std::size_t bytes, cudaStream_t stream);

 private:
  void* data_ = nullptr;
  std::size_t capacity_ = 0;
};

class PinnedLossTotals {
 public:
  PinnedLossTotals();
  ~PinnedLossTotals();
  PinnedLossTotals(const PinnedLossTotals&) = delete;
  PinnedLossTotals& operator=(const PinnedLossTotals&) = delete;
  LossTotals* get() const { return totals_; }

 private:
  LossTotals* totals_ = nullptr;
};

class CudaBackend final : public Backend {
 public:
  // `device` must already be current on this thread (make_gpu_backend does cudaSetDevice).
  explicit CudaBackend(int device, GpuConvolutions convolutions = GpuConvolutions::kFastest);
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  std::string name() const override { return name_; }
  int device() const { return device_; }

  void* allocate_bytes(std::size_t bytes) override;
  void release_bytes(void* pointer) noexcept override;
  void copy_from_host(void* destination, const void* host_source, std::size_t bytes) override;
  void copy_to_host(void* host_destination, const void* source, std::size_t bytes) override;
  void fill(float* data, std::size_t count, float value) override;

  void gemm_strided(bool transpose_a, bool transpose_b, int m, int n, int k, float alpha, const float* a, int lda,
                    const float* b, int ldb, float beta, float* c, int ldc) override;
  void add_row_bias(float* y, const float* bias, int rows, int cols) override;
  void sum_rows(const float* x, float* out, int rows, int cols, float beta) override;

  void activation_forward(Activation activation, const float* x, float* y, std::size_t count) override;
  void activation_backward(Activation activation, const float* y, const float* dy, float* dx,
                           std::size_t count) override;

  LossResult softmax_cross_entropy(const float* logits, const std::int32_t* labels, float* dlogits, int rows,
                                   int classes, float label_smoothing) override;

  void scale(float* data, std::size_t count, float factor) override;
  void im2col(const float* x, float* columns, const ConvGeometry& geometry, int batch) override;
  void col2im(const float* columns, float* dx, const ConvGeometry& geometry, int batch) override;
  std::unique_ptr<ConvolutionKernel> make_convolution(const ConvGeometry& geometry, int filters,
                                                      int max_batch) override;
  void max_pool_forward(const float* x, float* y, std::int32_t* argmax, const PoolGeometry& geometry,
                        int batch) override;
  void max_pool_backward(const float* dy, const std::int32_t* argmax, float* dx, const PoolGeometry& geometry,
                         int batch) override;

  void copy(void* destination, const void* source, std::size_t bytes) override;
  void axpy(float alpha, const float* x, float* y, std::size_t count) override;
  void add(const float* a, const float* b, float* out, std::size_t count) override;
  void multiply(const float* a, const float* b, float* out, std::size_t count) override;
  void copy_columns(const float* source, int source_stride, float* destination, int destination_stride, int rows,
                    int cols) override;
  void avg_pool_forward(const float* x, float* y, const PoolGeometry& geometry, int batch) override;
  void avg_pool_backward(const float* dy, float* dx, const PoolGeometry& geometry, int batch) override;
  void spatial_mean(const float* x, float* y, int batch, int pixels, int channels) override;
  void spatial_mean_backward(const float* dy, float* dx, int batch, int pixels, int channels) override;
  void batch_norm_training(const float* x, float* y, const BatchNormTensors& tensors, float momentum, float epsilon,
                           int rows, int channels) override;
  void batch_norm_inference(const float* x, float* y, const BatchNormTensors& tensors, float epsilon, int rows,
                            int channels) override;
  void batch_norm_backward(const float* x, const float* dy, const BatchNormTensors& tensors, float* dx, float* dgamma,
                           float* dbeta, int rows, int channels) override;
  void dropout_mask(float* mask, std::size_t count, float rate, std::uint64_t key) override;
  void gather_rows(const float* table, const float* ids, float* out, int count, int dim, int table_rows) override;
  void scatter_add_rows(const float* row_gradients, const float* ids, float* table_gradient, int count, int dim,
                        int table_rows) override;

  void* allocate_host_staging(std::size_t bytes) override;
  void release_host_staging(void* pointer) noexcept override;
  void synchronize() override;
  void mark_step(StepPoint point) override;
  std::string take_step_breakdown() override;
  void* native_stream() override { return stream_.get(); }

 private:
  void make_current() const;
  cudaStream_t stream() const { return stream_.get(); }

  int device_;
  GpuConvolutions convolutions_;
  std::string name_;
  // Declared in construction order; destroyed in reverse (the handle before its stream).
  Stream stream_;
  CublasHandle cublas_;
  DeviceScratch scratch_;
  PinnedLossTotals host_totals_;
  CudnnConvolutions cudnn_;  // before the stream it works on is destroyed
  StepTimeline timeline_;
};

}  // namespace pstrain::compute::cuda
