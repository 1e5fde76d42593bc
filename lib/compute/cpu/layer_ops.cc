// The CPU backend's operations for the layers beyond dense and convolution: copies and element-wise helpers,
// average and global pooling, batch normalisation, dropout masks and embedding rows. Plain loops over
// contiguous memory that GCC vectorises; every reduction runs in one fixed order (deterministic).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "compute/cpu/cpu_backend.h"
#include "core/counter_random.h"
#include "core/error.h"

namespace pstrain::compute {

namespace {

std::size_t pool_output_size(const PoolGeometry& g, int batch) {
  return static_cast<std::size_t>(batch) * g.out_height() * g.out_width() * g.channels;
}

// The row of `table` an id names; Error(kInputData) when it names none.
int checked_row(float id, int table_rows) {
  const int row = static_cast<int>(id);
  if (!(id >= 0.0f) || static_cast<float>(row) != id || row >= table_rows) {
    throw Error(ExitCode::kInputData, cat("embedding id ", id, " is not an integer in [0, ", table_rows, ")"));
  }
  return row;
}

}  // namespace

void CpuBackend::copy(void* destination, const void* source, std::size_t bytes) {
  if (bytes > 0) std::memcpy(destination, source, bytes);
}

void CpuBackend::axpy(float alpha, const float* x, float* y, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) y[i] += alpha * x[i];
}

void CpuBackend::add(const float* a, const float* b, float* out, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) out[i] = a[i] + b[i];
}

void CpuBackend::multiply(const float* a, const float* b, float* out, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) out[i] = a[i] * b[i];
}

void CpuBackend::copy_columns(const float* source, int source_stride, float* destination, int destination_stride,
                              int rows, int cols) {
  for (int r = 0; r < rows; ++r) {
    std::memcpy(destination + static_cast<std::size_t>(r) * destination_stride,
                source + static_cast<std::size_t>(r) * source_stride, static_cast<std::size_t>(cols) * sizeof(float));
  }
}

void CpuBackend::avg_pool_forward(const float* x, float* y, const PoolGeometry& g, int batch) {
  const float inverse_area = 1.0f / static_cast<float>(g.window * g.window);
  std::fill_n(y, pool_output_size(g, batch), 0.0f);
  for (int n = 0; n < batch; ++n) {
    for (int oy = 0; oy < g.out_height(); ++oy) {
      for (int ox = 0; ox < g.out_width(); ++ox) {
        float* out = y + ((static_cast<std::size_t>(n) * g.out_height() + oy) * g.out_width() + ox) * g.channels;
        for (int ky = 0; ky < g.window; ++ky) {
          for (int kx = 0; kx < g.window; ++kx) {
            const float* in =
                x + ((static_cast<std::size_t>(n) * g.height + oy * g.stride + ky) * g.width + ox * g.stride + kx) *
                        g.channels;
            for (int c = 0; c < g.channels; ++c) out[c] += in[c];
          }
        }
        for (int c = 0; c < g.channels; ++c) out[c] *= inverse_area;
      }
    }
  }
}

void CpuBackend::avg_pool_backward(const float* dy, float* dx, const PoolGeometry& g, int batch) {
  const float inverse_area = 1.0f / static_cast<float>(g.window * g.window);
  std::fill_n(dx, static_cast<std::size_t>(batch) * g.height * g.width * g.channels, 0.0f);
  for (int n = 0; n < batch; ++n) {
    for (int oy = 0; oy < g.out_height(); ++oy) {
      for (int ox = 0; ox < g.out_width(); ++ox) {
        const float* upstream =
            dy + ((static_cast<std::size_t>(n) * g.out_height() + oy) * g.out_width() + ox) * g.channels;
        for (int ky = 0; ky < g.window; ++ky) {
          for (int kx = 0; kx < g.window; ++kx) {
            float* in =
                dx + ((static_cast<std::size_t>(n) * g.height + oy * g.stride + ky) * g.width + ox * g.stride + kx) *
                         g.channels;
            for (int c = 0; c < g.channels; ++c) in[c] += upstream[c] * inverse_area;
          }
        }
      }
    }
  }
}

void CpuBackend::spatial_mean(const float* x, float* y, int batch, int pixels, int channels) {
  const float inverse_pixels = 1.0f / static_cast<float>(pixels);
  for (int n = 0; n < batch; ++n) {
    float* out = y + static_cast<std::size_t>(n) * channels;
    std::fill_n(out, channels, 0.0f);
    const float* image = x + static_cast<std::size_t>(n) * pixels * channels;
    for (int p = 0; p < pixels; ++p) {
      for (int c = 0; c < channels; ++c) out[c] += image[static_cast<std::size_t>(p) * channels + c];
    }
    for (int c = 0; c < channels; ++c) out[c] *= inverse_pixels;
  }
}

void CpuBackend::spatial_mean_backward(const float* dy, float* dx, int batch, int pixels, int channels) {
  const float inverse_pixels = 1.0f / static_cast<float>(pixels);
  for (int n = 0; n < batch; ++n) {
    const float* upstream = dy + static_cast<std::size_t>(n) * channels;
    float* image = dx + static_cast<std::size_t>(n) * pixels * channels;
    for (int p = 0; p < pixels; ++p) {
      for (int c = 0; c < channels; ++c)
        image[static_cast<std::size_t>(p) * channels + c] = upstream[c] * inverse_pixels;
    }
  }
}

void CpuBackend::batch_norm_training(const float* x, float* y, const BatchNormTensors& t, float momentum, float epsilon,
                                     int rows, int channels) {
  PSTRAIN_ASSERT(rows > 0 && channels > 0, "batch norm over ", rows, " x ", channels);
  // Two passes in double (mean, then the centred sum of squares): no cancellation for large means.
  std::vector<double> mean(static_cast<std::size_t>(channels), 0.0);
  std::vector<double> squares(static_cast<std::size_t>(channels), 0.0);
  for (int r = 0; r < rows; ++r) {
    const float* row = x + static_cast<std::size_t>(r) * channels;
    for (int c = 0; c < channels; ++c) mean[c] += row[c];
  }
  for (double& value : mean) value /= rows;
  for (int r = 0; r < rows; ++r) {
    const float* row = x + static_cast<std::size_t>(r) * channels;
    for (int c = 0; c < channels; ++c) {
      const double centred = row[c] - mean[c];
      squares[c] += centred * centred;
    }
  }
  for (int c = 0; c < channels; ++c) {
    const double variance = squares[c] / rows;
    t.batch_mean[c] = static_cast<float>(mean[c]);
    t.batch_inv_std[c] = static_cast<float>(1.0 / std::sqrt(variance + epsilon));
    const double unbiased = rows > 1 ? squares[c] / (rows - 1) : variance;
    t.running_mean[c] = (1.0f - momentum) * t.running_mean[c] + momentum * static_cast<float>(mean[c]);
    t.running_var[c] = (1.0f - momentum) * t.running_var[c] + momentum * static_cast<float>(unbiased);
  }
  for (int r = 0; r < rows; ++r) {
    const float* in = x + static_cast<std::size_t>(r) * channels;
    float* out = y + static_cast<std::size_t>(r) * channels;
    for (int c = 0; c < channels; ++c) {
      out[c] = t.gamma[c] * ((in[c] - t.batch_mean[c]) * t.batch_inv_std[c]) + t.beta[c];
    }
  }
}

void CpuBackend::batch_norm_inference(const float* x, float* y, const BatchNormTensors& t, float epsilon, int rows,
                                      int channels) {
  std::vector<float> inv_std(static_cast<std::size_t>(channels));
  for (int c = 0; c < channels; ++c) {
    inv_std[c] = static_cast<float>(1.0 / std::sqrt(static_cast<double>(t.running_var[c]) + epsilon));
  }
  for (int r = 0; r < rows; ++r) {
    const float* in = x + static_cast<std::size_t>(r) * channels;
    float* out = y + static_cast<std::size_t>(r) * channels;
    for (int c = 0; c < channels; ++c) out[c] = t.gamma[c] * ((in[c] - t.running_mean[c]) * inv_std[c]) + t.beta[c];
  }
}

void CpuBackend::batch_norm_backward(const float* x, const float* dy, const BatchNormTensors& t, float* dx,
                                     float* dgamma, float* dbeta, int rows, int channels) {
  // With xhat = (x - mean) * inv_std: dbeta = sum dy, dgamma = sum dy * xhat, and
  // dx = gamma * inv_std / rows * (rows * dy - dbeta - xhat * dgamma).
  std::vector<double> sum_dy(static_cast<std::size_t>(channels), 0.0);
  std::vector<double> sum_dy_xhat(static_cast<std::size_t>(channels), 0.0);
  for (int r = 0; r < rows; ++r) {
    const float* in = x + static_cast<std::size_t>(r) * channels;
    const float* upstream = dy + static_cast<std::size_t>(r) * channels;
    for (int c = 0; c < channels; ++c) {
      sum_dy[c] += upstream[c];
      sum_dy_xhat[c] += static_cast<double>(upstream[c]) * ((in[c] - t.batch_mean[c]) * t.batch_inv_std[c]);
    }
  }
  for (int c = 0; c < channels; ++c) {
    dbeta[c] = static_cast<float>(sum_dy[c]);
    dgamma[c] = static_cast<float>(sum_dy_xhat[c]);
  }
  const float inverse_rows = 1.0f / static_cast<float>(rows);
  for (int r = 0; r < rows; ++r) {
    const float* in = x + static_cast<std::size_t>(r) * channels;
    const float* upstream = dy + static_cast<std::size_t>(r) * channels;
    float* out = dx + static_cast<std::size_t>(r) * channels;
    for (int c = 0; c < channels; ++c) {
      const float xhat = (in[c] - t.batch_mean[c]) * t.batch_inv_std[c];
      out[c] = t.gamma[c] * t.batch_inv_std[c] * inverse_rows *
               (static_cast<float>(rows) * upstream[c] - dbeta[c] - xhat * dgamma[c]);
    }
  }
}

void CpuBackend::dropout_mask(float* mask, std::size_t count, float rate, std::uint64_t key) {
  const float keep_scale = 1.0f / (1.0f - rate);
  for (std::size_t i = 0; i < count; ++i) mask[i] = counter_uniform(key, i) >= rate ? keep_scale : 0.0f;
}

void CpuBackend::gather_rows(const float* table, const float* ids, float* out, int count, int dim, int table_rows) {
  for (int r = 0; r < count; ++r) {
    const int row = checked_row(ids[r], table_rows);
    std::memcpy(out + static_cast<std::size_t>(r) * dim, table + static_cast<std::size_t>(row) * dim,
                static_cast<std::size_t>(dim) * sizeof(float));
  }
}

void CpuBackend::scatter_add_rows(const float* row_gradients, const float* ids, float* table_gradient, int count,
                                  int dim, int table_rows) {
  std::fill_n(table_gradient, static_cast<std::size_t>(table_rows) * dim, 0.0f);
  for (int r = 0; r < count; ++r) {
    float* target = table_gradient + static_cast<std::size_t>(checked_row(ids[r], table_rows)) * dim;
    const float* source = row_gradients + static_cast<std::size_t>(r) * dim;
    for (int d = 0; d < dim; ++d) target[d] += source[d];
  }
}

}  // namespace pstrain::compute
