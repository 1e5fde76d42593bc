#pragma once
// The per-element index arithmetic of the convolution and pooling kernels, as plain functions that compile both
// for the GPU (under nvcc) and for the host. The kernels in kernels.cu are grid-stride loops around these; the
// unit tests (tests/unit/gpu/test_index_math.cc) run the same functions on the host against a naive reference,
// so the geometry is checked in every build, with or without a GPU.
//
// Layouts are those of compute/backend.h: images NHWC, im2col rows (n, oy, ox), im2col columns (ky, kx, c).
// Flat indices are 64-bit; per-axis coordinates are int.
#include <cstdint>

#if defined(__CUDACC__)
#define PSTRAIN_HOST_DEVICE __host__ __device__
#else
#define PSTRAIN_HOST_DEVICE
#endif

namespace pstrain::compute::cuda {

// ConvGeometry / PoolGeometry flattened into what a kernel needs (their member functions are host-only).
struct ConvShape {
  int height, width, channels, kernel, stride, padding, out_height, out_width, column_width;
};

struct PoolShape {
  int height, width, channels, window, stride, out_height, out_width;
};

// Coordinates of flat index i in an NHWC tensor of height x width x channels per sample.
struct NhwcPoint {
  std::int64_t n;
  int y, x, c;
};

PSTRAIN_HOST_DEVICE inline NhwcPoint nhwc_point(std::int64_t i, int height, int width, int channels) {
  NhwcPoint point;
  point.c = static_cast<int>(i % channels);
  std::int64_t rest = i / channels;
  point.x = static_cast<int>(rest % width);
  rest /= width;
  point.y = static_cast<int>(rest % height);
  point.n = rest / height;
  return point;
}

// columns[i] for i in [0, batch * out_h * out_w * column_width).
PSTRAIN_HOST_DEVICE inline float im2col_value(const float* x, std::int64_t i, const ConvShape& s) {
  const std::int64_t pixel = i / s.column_width;  // (n, oy, ox)
  int q = static_cast<int>(i - pixel * s.column_width);
  const int c = q % s.channels;
  q /= s.channels;
  const int kx = q % s.kernel;
  const int ky = q / s.kernel;
  const int ox = static_cast<int>(pixel % s.out_width);
  const std::int64_t rest = pixel / s.out_width;
  const int oy = static_cast<int>(rest % s.out_height);
  const std::int64_t n = rest / s.out_height;
  const int iy = oy * s.stride - s.padding + ky;
  const int ix = ox * s.stride - s.padding + kx;
  if (iy < 0 || iy >= s.height || ix < 0 || ix >= s.width) return 0.0f;
  return x[((n * s.height + iy) * s.width + ix) * s.channels + c];
}

// dx[j] for j in [0, batch * H * W * C): the sum, in (ky, kx) order, of every columns entry that im2col copied
// from input element j. A gather, so every output is written by one thread: no atomics, deterministic.
PSTRAIN_HOST_DEVICE inline float col2im_value(const float* columns, std::int64_t j, const ConvShape& s) {
  const auto [n, iy, ix, c] = nhwc_point(j, s.height, s.width, s.channels);
  float sum = 0.0f;
  for (int ky = 0; ky < s.kernel; ++ky) {
    const int ty = iy + s.padding - ky;  // oy * stride when (oy, ky) covers iy
    if (ty < 0 || ty % s.stride != 0) continue;
    const int oy = ty / s.stride;
    if (oy >= s.out_height) continue;
    for (int kx = 0; kx < s.kernel; ++kx) {
      const int tx = ix + s.padding - kx;
      if (tx < 0 || tx % s.stride != 0) continue;
      const int ox = tx / s.stride;
      if (ox >= s.out_width) continue;
      const std::int64_t row = (n * s.out_height + oy) * s.out_width + ox;
      sum += columns[row * s.column_width + (ky * s.kernel + kx) * s.channels + c];
    }
  }
  return sum;
}

// y[i] for i in [0, batch * out_h * out_w * C), and in *argmax the index into x it came from: the first maximum
// in window order (ky, then kx). A NaN wins over numbers (the first NaN), so a diverged layer stays visible.
PSTRAIN_HOST_DEVICE inline float max_pool_value(const float* x, std::int64_t i, const PoolShape& s,
                                                std::int64_t* argmax) {
  const auto [n, oy, ox, c] = nhwc_point(i, s.out_height, s.out_width, s.channels);
  const std::int64_t corner =
      ((n * s.height + static_cast<std::int64_t>(oy) * s.stride) * s.width + static_cast<std::int64_t>(ox) * s.stride) *
          s.channels +
      c;
  std::int64_t best_index = corner;
  float best = x[corner];
  for (int ky = 0; ky < s.window; ++ky) {
    for (int kx = 0; kx < s.window; ++kx) {
      const std::int64_t index = corner + (static_cast<std::int64_t>(ky) * s.width + kx) * s.channels;
      const float value = x[index];
      if (value > best || (value != value && best == best)) {
        best = value;
        best_index = index;
      }
    }
  }
  *argmax = best_index;
  return best;
}

// dx[j] for j in [0, batch * H * W * C): the sum, in (oy, ox) order, of dy over the windows that contain input
// element j and took their maximum from it. A gather: deterministic, and correct for overlapping windows too.
PSTRAIN_HOST_DEVICE inline float max_pool_gradient(const float* dy, const std::int32_t* argmax, std::int64_t j,
                                                   const PoolShape& s) {
  const auto [n, iy, ix, c] = nhwc_point(j, s.height, s.width, s.channels);
  // Windows oy with oy * stride <= iy < oy * stride + window.
  const int oy_first = iy < s.window ? 0 : (iy - s.window) / s.stride + 1;
  const int ox_first = ix < s.window ? 0 : (ix - s.window) / s.stride + 1;
  const int oy_last = iy / s.stride < s.out_height - 1 ? iy / s.stride : s.out_height - 1;
  const int ox_last = ix / s.stride < s.out_width - 1 ? ix / s.stride : s.out_width - 1;
  float sum = 0.0f;
  for (int oy = oy_first; oy <= oy_last; ++oy) {
    for (int ox = ox_first; ox <= ox_last; ++ox) {
      const std::int64_t i = ((n * s.out_height + oy) * s.out_width + ox) * s.channels + c;
      if (argmax[i] == j) sum += dy[i];
    }
  }
  return sum;
}

}  // namespace pstrain::compute::cuda
