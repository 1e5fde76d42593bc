#pragma once
// The CPU backend: buffers are ordinary host memory, matrix products go to OpenBLAS (single-precision,
// row-major), everything else is a plain loop the compiler can vectorise. The OpenBLAS thread count is the
// caller's business (OPENBLAS_NUM_THREADS); this backend never changes it.
//
// Element-wise operations read and write one element at a time, so they may be called in place (x == y).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "compute/backend.h"

namespace pstrain::compute {

// How the CPU backend runs convolutions: oneDNN's primitives where the build has oneDNN and it has a kernel for
// the shape (compute/cpu/onednn_convolution.h), else im2col + gemm; or im2col + gemm always (the results of
// builds before oneDNN, bit for bit: the model pins of that path).
enum class CpuConvolutions { kFastest, kIm2colGemm };

class CpuBackend : public Backend {
 public:
  explicit CpuBackend(CpuConvolutions convolutions = CpuConvolutions::kFastest) : convolutions_(convolutions) {}

  // Buffers start on a cache-line boundary so vector loads never straddle two lines at the start of a row
  // block, and so OpenBLAS's packing routines see aligned input.
  static constexpr std::size_t kAlignment = 64;

  std::string name() const override { return "cpu"; }
  bool host_accessible() const override { return true; }

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

  // layer_ops.cc
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

 private:
  // One row of exp(logit - max) when the loss is wanted without its gradient (evaluation); grown, never shrunk.
  float* exp_scratch(int classes);

  CpuConvolutions convolutions_;
  std::vector<float> exp_scratch_;
};

}  // namespace pstrain::compute
