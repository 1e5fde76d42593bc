#include "compute/cpu/cpu_backend.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "compute/cpu/onednn_convolution.h"
#include "compute/cpu/onednn_gemm.h"
#include "compute/cpu/softmax_kernels.h"
#include "compute/cpu/vector_math.h"
#include "core/error.h"

namespace pstrain::compute {

void* CpuBackend::allocate_bytes(std::size_t bytes) {
  // aligned_alloc wants a multiple of the alignment; a zero-byte request still gets a real (unique) pointer
  // so that Buffer's "null means empty" rule holds only for default-constructed buffers.
  const std::size_t rounded = (std::max<std::size_t>(bytes, 1) + kAlignment - 1) / kAlignment * kAlignment;
  void* pointer = std::aligned_alloc(kAlignment, rounded);
  if (pointer == nullptr) throw Error(ExitCode::kInternal, cat("out of host memory allocating ", bytes, " bytes"));
  return pointer;
}

void CpuBackend::release_bytes(void* pointer) noexcept {
  std::free(pointer);
}

void CpuBackend::copy_from_host(void* destination, const void* host_source, std::size_t bytes) {
  if (bytes > 0) std::memcpy(destination, host_source, bytes);  // memcpy with null pointers is undefined
}

void CpuBackend::copy_to_host(void* host_destination, const void* source, std::size_t bytes) {
  if (bytes > 0) std::memcpy(host_destination, source, bytes);
}

void CpuBackend::fill(float* data, std::size_t count, float value) {
  std::fill_n(data, count, value);
}

void CpuBackend::gemm_strided(bool transpose_a, bool transpose_b, int m, int n, int k, float alpha, const float* a,
                              int lda, const float* b, int ldb, float beta, float* c, int ldc) {
  PSTRAIN_ASSERT(m >= 0 && n >= 0 && k >= 0 && ldc >= n, "gemm sizes m=", m, " n=", n, " k=", k, " ldc=", ldc);
  if (m == 0 || n == 0) return;
  if (k == 0) {
    // BLAS rejects a leading dimension of 0, but the product of empty matrices is well defined: c = beta * c,
    // where beta == 0 means "overwrite" (c may hold garbage, even NaN).
    for (int row = 0; row < m; ++row) {
      float* const c_row = c + static_cast<std::size_t>(row) * static_cast<std::size_t>(ldc);
      if (beta == 0.0f) {
        std::fill_n(c_row, n, 0.0f);
      } else {
        for (int i = 0; i < n; ++i) c_row[i] *= beta;
      }
    }
    return;
  }
  if (prefers_onednn_sgemm(m, n, k)) {
    return onednn_sgemm(transpose_a, transpose_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  cblas_sgemm(CblasRowMajor, transpose_a ? CblasTrans : CblasNoTrans, transpose_b ? CblasTrans : CblasNoTrans, m, n, k,
              alpha, a, lda, b, ldb, beta, c, ldc);
}

void CpuBackend::add_row_bias(float* y, const float* bias, int rows, int cols) {
  for (int r = 0; r < rows; ++r) {
    float* row = y + static_cast<std::size_t>(r) * cols;
    for (int c = 0; c < cols; ++c) row[c] += bias[c];
  }
}

void CpuBackend::sum_rows(const float* x, float* out, int rows, int cols, float beta) {
  // beta == 0 overwrites (out may be uninitialised), as in BLAS.
  if (beta == 0.0f) {
    std::fill_n(out, cols, 0.0f);
  } else if (beta != 1.0f) {
    for (int c = 0; c < cols; ++c) out[c] *= beta;
  }
  // Row by row so the inner loop runs over contiguous memory and vectorises.
  for (int r = 0; r < rows; ++r) {
    const float* row = x + static_cast<std::size_t>(r) * cols;
    for (int c = 0; c < cols; ++c) out[c] += row[c];
  }
}

void CpuBackend::activation_forward(Activation activation, const float* x, float* y, std::size_t count) {
  switch (activation) {
    case Activation::kRelu:
      // Written so that NaN passes through (as in PyTorch): a diverged layer must not be silently zeroed.
      for (std::size_t i = 0; i < count; ++i) y[i] = x[i] < 0.0f ? 0.0f : x[i];
      return;
    case Activation::kTanh:
      for (std::size_t i = 0; i < count; ++i) y[i] = cpu::vector_tanh(x[i]);
      return;
    case Activation::kSigmoid:
      for (std::size_t i = 0; i < count; ++i) y[i] = cpu::vector_sigmoid(x[i]);
      return;
  }
  PSTRAIN_ASSERT(false, "unknown activation ", static_cast<int>(activation));
}

void CpuBackend::activation_backward(Activation activation, const float* y, const float* dy, float* dx,
                                     std::size_t count) {
  switch (activation) {
    case Activation::kRelu:
      for (std::size_t i = 0; i < count; ++i) {
        const float upstream = dy[i];  // loaded unconditionally so the select becomes a vector blend
        dx[i] = y[i] > 0.0f ? upstream : 0.0f;
      }
      return;
    case Activation::kTanh:
      for (std::size_t i = 0; i < count; ++i) dx[i] = dy[i] * (1.0f - y[i] * y[i]);
      return;
    case Activation::kSigmoid:
      for (std::size_t i = 0; i < count; ++i) dx[i] = dy[i] * y[i] * (1.0f - y[i]);
      return;
  }
  PSTRAIN_ASSERT(false, "unknown activation ", static_cast<int>(activation));
}

Backend::LossResult CpuBackend::softmax_cross_entropy(const float* logits, const std::int32_t* labels, float* dlogits,
                                                      int rows, int classes, float label_smoothing) {
  PSTRAIN_ASSERT(rows >= 0 && classes > 0, "softmax_cross_entropy rows=", rows, " classes=", classes);
  PSTRAIN_ASSERT(label_smoothing >= 0.0f && label_smoothing < 1.0f, "label smoothing ", label_smoothing);
  LossResult result;
  const float inverse_rows = rows > 0 ? 1.0f / static_cast<float>(rows) : 0.0f;
  for (int r = 0; r < rows; ++r) {
    const float* row = logits + static_cast<std::size_t>(r) * classes;
    const std::int32_t label = labels[r];
    if (label < 0 || label >= classes) {
      throw Error(ExitCode::kInputData, cat("label ", label, " is outside [0, ", classes, ")"));
    }

    // Shifting by the row maximum keeps every exp() in (0, 1], so large logits cannot overflow;
    // loss = logsumexp(row) - row[label] = log(sum exp(row - max)) + max - row[label].
    const int arg_max = cpu::first_max_index(row, classes);
    const float max = row[arg_max];
    float* exps = dlogits != nullptr ? dlogits + static_cast<std::size_t>(r) * classes : exp_scratch(classes);
    cpu::shifted_exp(row, max, exps, classes);
    double exp_sum = 0;  // in class order, one rounding per class: the bits every model was trained with
    for (int c = 0; c < classes; ++c) exp_sum += exps[c];
    result.loss_sum += std::log(exp_sum) + (static_cast<double>(max) - static_cast<double>(row[label]));
    if (label_smoothing > 0.0f) {
      // -sum_c t_c log p_c with t = (1 - e) onehot + e / K: the plain loss plus e (mean_c(-log p_c) - (-log p_label)).
      double logit_sum = 0;
      for (int c = 0; c < classes; ++c) logit_sum += row[c];
      result.loss_sum += label_smoothing * (static_cast<double>(row[label]) - logit_sum / classes);
    }
    if (arg_max == label) ++result.correct;

    if (dlogits != nullptr) {
      // (softmax - onehot) / rows: the gradient of the MEAN loss.
      float* gradient = dlogits + static_cast<std::size_t>(r) * classes;
      const float scale = static_cast<float>(1.0 / exp_sum) * inverse_rows;
      for (int c = 0; c < classes; ++c) gradient[c] *= scale;
      if (label_smoothing > 0.0f) {
        const float spread = label_smoothing / static_cast<float>(classes) * inverse_rows;
        for (int c = 0; c < classes; ++c) gradient[c] -= spread;
        gradient[label] -= (1.0f - label_smoothing) * inverse_rows;
      } else {
        gradient[label] -= inverse_rows;
      }
    }
  }
  return result;
}

float* CpuBackend::exp_scratch(int classes) {
  if (exp_scratch_.size() < static_cast<std::size_t>(classes)) exp_scratch_.resize(static_cast<std::size_t>(classes));
  return exp_scratch_.data();
}

std::unique_ptr<ConvolutionKernel> CpuBackend::make_convolution(const ConvGeometry& geometry, int filters,
                                                                int max_batch) {
  if (convolutions_ == CpuConvolutions::kIm2colGemm) return nullptr;
  return make_onednn_convolution(geometry, filters, max_batch);
}

std::unique_ptr<Backend> make_cpu_backend() {
  return std::make_unique<CpuBackend>();
}

}  // namespace pstrain::compute
