#pragma once
// Convolution and pooling straight from their definitions in compute/backend.h: the yardstick for the CPU
// backend (test_conv_pool.cc), the CUDA kernels (tests/unit/gpu/test_gpu_backend.cc) and their index arithmetic
// run on the host (tests/unit/gpu/test_index_math.cc).
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "compute/backend.h"

namespace pstrain::compute::testing {

inline std::size_t image_count(const ConvGeometry& g, int batch) {
  return static_cast<std::size_t>(batch) * g.height * g.width * g.channels;
}
inline std::size_t column_count(const ConvGeometry& g, int batch) {
  return static_cast<std::size_t>(batch) * g.out_height() * g.out_width() * g.column_width();
}
inline std::size_t pool_in_count(const PoolGeometry& g, int batch) {
  return static_cast<std::size_t>(batch) * g.height * g.width * g.channels;
}
inline std::size_t pool_out_count(const PoolGeometry& g, int batch) {
  return static_cast<std::size_t>(batch) * g.out_height() * g.out_width() * g.channels;
}

// Row (n, oy, ox), column (ky, kx, c); zero where the window hangs over the padding.
inline std::vector<float> reference_im2col(const std::vector<float>& x, const ConvGeometry& g, int batch) {
  std::vector<float> columns;
  columns.reserve(column_count(g, batch));
  for (int n = 0; n < batch; ++n) {
    for (int oy = 0; oy < g.out_height(); ++oy) {
      for (int ox = 0; ox < g.out_width(); ++ox) {
        for (int ky = 0; ky < g.kernel; ++ky) {
          for (int kx = 0; kx < g.kernel; ++kx) {
            for (int c = 0; c < g.channels; ++c) {
              const int iy = oy * g.stride - g.padding + ky;
              const int ix = ox * g.stride - g.padding + kx;
              const bool inside = iy >= 0 && iy < g.height && ix >= 0 && ix < g.width;
              columns.push_back(
                  inside ? x[((static_cast<std::size_t>(n) * g.height + iy) * g.width + ix) * g.channels + c] : 0.0f);
            }
          }
        }
      }
    }
  }
  return columns;
}

// The adjoint of im2col: every column entry added back to the input element it was copied from (in double).
inline std::vector<double> reference_col2im(const std::vector<float>& columns, const ConvGeometry& g, int batch) {
  std::vector<double> dx(image_count(g, batch), 0.0);
  std::size_t entry = 0;
  for (int n = 0; n < batch; ++n) {
    for (int oy = 0; oy < g.out_height(); ++oy) {
      for (int ox = 0; ox < g.out_width(); ++ox) {
        for (int ky = 0; ky < g.kernel; ++ky) {
          for (int kx = 0; kx < g.kernel; ++kx) {
            for (int c = 0; c < g.channels; ++c, ++entry) {
              const int iy = oy * g.stride - g.padding + ky;
              const int ix = ox * g.stride - g.padding + kx;
              if (iy < 0 || iy >= g.height || ix < 0 || ix >= g.width) continue;
              dx[((static_cast<std::size_t>(n) * g.height + iy) * g.width + ix) * g.channels + c] += columns[entry];
            }
          }
        }
      }
    }
  }
  return dx;
}

struct PoolResult {
  std::vector<float> y;
  std::vector<std::int32_t> argmax;
};

// The first maximum in window order (ky, then kx).
inline PoolResult reference_max_pool(const std::vector<float>& x, const PoolGeometry& g, int batch) {
  PoolResult result;
  for (int n = 0; n < batch; ++n) {
    for (int oy = 0; oy < g.out_height(); ++oy) {
      for (int ox = 0; ox < g.out_width(); ++ox) {
        for (int c = 0; c < g.channels; ++c) {
          std::int32_t best = -1;
          for (int ky = 0; ky < g.window; ++ky) {
            for (int kx = 0; kx < g.window; ++kx) {
              const auto index = static_cast<std::int32_t>(
                  ((n * g.height + oy * g.stride + ky) * g.width + ox * g.stride + kx) * g.channels + c);
              if (best < 0 || x[index] > x[best]) best = index;
            }
          }
          result.y.push_back(x[best]);
          result.argmax.push_back(best);
        }
      }
    }
  }
  return result;
}

inline std::vector<double> reference_max_pool_backward(const std::vector<float>& dy,
                                                       const std::vector<std::int32_t>& argmax, std::size_t in_count) {
  std::vector<double> dx(in_count, 0.0);
  for (std::size_t i = 0; i < dy.size(); ++i) dx[static_cast<std::size_t>(argmax[i])] += dy[i];
  return dx;
}

// Padding 0/1/2, strides 1/2/3, one and several channels, kernels 1/2/3/5, odd and even sizes, a kernel larger than
// the image, windows entirely in the padding, and the CNN's own layers.
inline const std::vector<ConvGeometry> kConvGeometries{
    {.height = 5, .width = 4, .channels = 1, .kernel = 3, .stride = 1, .padding = 1},
    {.height = 6, .width = 7, .channels = 3, .kernel = 3, .stride = 1, .padding = 0},
    {.height = 7, .width = 6, .channels = 2, .kernel = 5, .stride = 1, .padding = 2},
    {.height = 7, .width = 7, .channels = 3, .kernel = 3, .stride = 2, .padding = 1},
    {.height = 8, .width = 5, .channels = 2, .kernel = 3, .stride = 2, .padding = 2},
    {.height = 9, .width = 8, .channels = 5, .kernel = 3, .stride = 3, .padding = 2},
    {.height = 8, .width = 8, .channels = 2, .kernel = 2, .stride = 2, .padding = 0},
    {.height = 4, .width = 4, .channels = 4, .kernel = 1, .stride = 1, .padding = 0},
    {.height = 3, .width = 2, .channels = 2, .kernel = 5, .stride = 1, .padding = 2},
    {.height = 5, .width = 5, .channels = 1, .kernel = 1, .stride = 2, .padding = 2},
    {.height = 28, .width = 28, .channels = 1, .kernel = 3, .stride = 1, .padding = 1},
    {.height = 14, .width = 14, .channels = 32, .kernel = 3, .stride = 1, .padding = 1},
};

// 2x2/2 on even and odd sizes (the last row/column is dropped), overlapping 3x3/2 and 3x3/1 windows, 3x3/3, a
// window covering the whole image, 1x1, and the CNN's pools.
inline const std::vector<PoolGeometry> kPoolGeometries{
    {.height = 4, .width = 4, .channels = 3, .window = 2, .stride = 2},
    {.height = 5, .width = 7, .channels = 2, .window = 2, .stride = 2},
    {.height = 5, .width = 5, .channels = 2, .window = 3, .stride = 2},
    {.height = 7, .width = 6, .channels = 3, .window = 3, .stride = 1},
    {.height = 6, .width = 7, .channels = 1, .window = 3, .stride = 3},
    {.height = 3, .width = 3, .channels = 5, .window = 3, .stride = 1},
    {.height = 2, .width = 2, .channels = 8, .window = 1, .stride = 1},
    {.height = 28, .width = 28, .channels = 32, .window = 2, .stride = 2},
    {.height = 14, .width = 14, .channels = 64, .window = 2, .stride = 2},
};

// Test names for parameterised suites: "h5_w4_c1_k3_s1_p1", "h4_w4_c3_window2_s2".
inline std::string describe(const ConvGeometry& g) {
  std::ostringstream name;
  name << "h" << g.height << "_w" << g.width << "_c" << g.channels << "_k" << g.kernel << "_s" << g.stride << "_p"
       << g.padding;
  return name.str();
}

inline std::string describe(const PoolGeometry& g) {
  std::ostringstream name;
  name << "h" << g.height << "_w" << g.width << "_c" << g.channels << "_window" << g.window << "_s" << g.stride;
  return name.str();
}

struct GeometryName {
  template <typename Info>
  std::string operator()(const Info& info) const {
    return describe(info.param);
  }
};

}  // namespace pstrain::compute::testing

namespace pstrain::compute {
// How googletest prints a geometry (found by argument-dependent lookup).
inline void PrintTo(const ConvGeometry& g, std::ostream* out) {
  *out << testing::describe(g);
}
inline void PrintTo(const PoolGeometry& g, std::ostream* out) {
  *out << testing::describe(g);
}
}  // namespace pstrain::compute
