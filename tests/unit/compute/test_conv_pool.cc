// im2col/col2im and max pooling (NHWC) against the naive references of reference_ops.h, through the Backend
// interface only so that the same checks hold for a backend whose memory is not host memory.
#include <cmath>
#include <limits>
#include <string>

#include "backend_test_util.h"
#include "reference_ops.h"

namespace pstrain::compute::testing {
namespace {

std::size_t image_size(const ConvGeometry& g) {
  return static_cast<std::size_t>(g.height) * g.width * g.channels;
}

// x[n, y, x, c], or 0 in the padding.
float pixel(const std::vector<float>& x, const ConvGeometry& g, int n, int y, int x_coordinate, int c) {
  if (y < 0 || y >= g.height || x_coordinate < 0 || x_coordinate >= g.width) return 0.0f;
  return x[((static_cast<std::size_t>(n) * g.height + y) * g.width + x_coordinate) * g.channels + c];
}

// The convolution straight from its definition: y[n, oy, ox, f] = sum_{ky, kx, c} x[n, oy*s - p + ky,
// ox*s - p + kx, c] * w[f, ky, kx, c], accumulated in double.
std::vector<double> direct_convolution(const std::vector<float>& x, const std::vector<float>& w, const ConvGeometry& g,
                                       int filters, int batch) {
  std::vector<double> y;
  for (int n = 0; n < batch; ++n) {
    for (int oy = 0; oy < g.out_height(); ++oy) {
      for (int ox = 0; ox < g.out_width(); ++ox) {
        for (int f = 0; f < filters; ++f) {
          double sum = 0;
          for (int ky = 0; ky < g.kernel; ++ky) {
            for (int kx = 0; kx < g.kernel; ++kx) {
              for (int c = 0; c < g.channels; ++c) {
                const float weight =
                    w[((static_cast<std::size_t>(f) * g.kernel + ky) * g.kernel + kx) * g.channels + c];
                sum += static_cast<double>(weight) *
                       pixel(x, g, n, oy * g.stride - g.padding + ky, ox * g.stride - g.padding + kx, c);
              }
            }
          }
          y.push_back(sum);
        }
      }
    }
  }
  return y;
}

// Padding 0/1/2, stride 1 and 2, one and several channels, kernels 1/3/5, odd and even sizes, a kernel larger than
// the image, and windows that lie entirely in the padding (stride 2, padding 2, kernel 1).
const std::vector<ConvGeometry> kConvGeometries{
    {.height = 5, .width = 4, .channels = 1, .kernel = 3, .stride = 1, .padding = 1},
    {.height = 6, .width = 7, .channels = 3, .kernel = 3, .stride = 1, .padding = 0},
    {.height = 7, .width = 6, .channels = 2, .kernel = 5, .stride = 1, .padding = 2},
    {.height = 7, .width = 7, .channels = 3, .kernel = 3, .stride = 2, .padding = 1},
    {.height = 8, .width = 5, .channels = 2, .kernel = 3, .stride = 2, .padding = 2},
    {.height = 4, .width = 4, .channels = 4, .kernel = 1, .stride = 1, .padding = 0},
    {.height = 3, .width = 2, .channels = 2, .kernel = 5, .stride = 1, .padding = 2},
    {.height = 5, .width = 5, .channels = 1, .kernel = 1, .stride = 2, .padding = 2},
    {.height = 28, .width = 28, .channels = 1, .kernel = 3, .stride = 1, .padding = 1},
};
constexpr int kBatch = 3;

class ConvolutionTest : public BackendTest, public ::testing::WithParamInterface<ConvGeometry> {};

TEST_P(ConvolutionTest, Im2colMatchesItsDefinition) {
  const ConvGeometry g = GetParam();
  const auto x = random_floats(kBatch * image_size(g), 101);
  auto x_buffer = to_backend(*backend_, x);
  Buffer<float> columns(*backend_, column_count(g, kBatch));
  // Garbage first: im2col must write every entry, zeros included.
  backend_->fill(columns.data(), columns.size(), std::numeric_limits<float>::quiet_NaN());
  backend_->im2col(x_buffer.data(), columns.data(), g, kBatch);
  EXPECT_EQ(to_host(*backend_, columns), reference_im2col(x, g, kBatch)) << describe(g);
}

TEST_P(ConvolutionTest, Im2colTimesWeightsEqualsDirectConvolution) {
  const ConvGeometry g = GetParam();
  const int filters = 5;
  const auto x = random_floats(kBatch * image_size(g), 102);
  const auto w = random_floats(static_cast<std::size_t>(filters) * g.column_width(), 103);
  auto x_buffer = to_backend(*backend_, x);
  auto w_buffer = to_backend(*backend_, w);
  const int rows = kBatch * g.out_height() * g.out_width();
  Buffer<float> columns(*backend_, column_count(g, kBatch));
  Buffer<float> y_buffer(*backend_, static_cast<std::size_t>(rows) * filters);
  backend_->im2col(x_buffer.data(), columns.data(), g, kBatch);
  // y = columns W^T with W stored {filters, k, k, C} = filters x column_width: already NHWC.
  backend_->gemm(false, true, rows, filters, g.column_width(), 1.0f, columns.data(), w_buffer.data(), 0.0f,
                 y_buffer.data());
  const auto y = to_host(*backend_, y_buffer);
  const auto expected = direct_convolution(x, w, g, filters, kBatch);
  ASSERT_EQ(y.size(), expected.size());
  for (std::size_t i = 0; i < y.size(); ++i) {
    ASSERT_NEAR(y[i], expected[i], 1e-5 * (1 + g.column_width())) << describe(g) << " output " << i;
  }
}

TEST_P(ConvolutionTest, Col2imIsTheAdjointOfIm2col) {
  // <im2col(x), c> == <x, col2im(c)> for every x and c exactly characterises the adjoint.
  const ConvGeometry g = GetParam();
  const auto x = random_floats(kBatch * image_size(g), 104);
  const auto c = random_floats(column_count(g, kBatch), 105);
  auto x_buffer = to_backend(*backend_, x);
  auto c_buffer = to_backend(*backend_, c);
  Buffer<float> columns(*backend_, c.size());
  Buffer<float> dx_buffer(*backend_, x.size());
  backend_->fill(dx_buffer.data(), dx_buffer.size(), std::numeric_limits<float>::quiet_NaN());  // overwritten
  backend_->im2col(x_buffer.data(), columns.data(), g, kBatch);
  backend_->col2im(c_buffer.data(), dx_buffer.data(), g, kBatch);
  const auto im2col_x = to_host(*backend_, columns);
  const auto col2im_c = to_host(*backend_, dx_buffer);

  double left = 0, right = 0, magnitude = 0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    left += static_cast<double>(im2col_x[i]) * c[i];
    magnitude += std::abs(static_cast<double>(im2col_x[i]) * c[i]);
  }
  for (std::size_t i = 0; i < x.size(); ++i) right += static_cast<double>(x[i]) * col2im_c[i];
  EXPECT_NEAR(left, right, 1e-5 * magnitude) << describe(g);
}

TEST_P(ConvolutionTest, Col2imSumsEveryCopyOfAnElement) {
  // With c = 1 everywhere, col2im counts how many times im2col copied each input element: the number of output
  // pixels whose window covers it.
  const ConvGeometry g = GetParam();
  auto ones = to_backend(*backend_, std::vector<float>(column_count(g, kBatch), 1.0f));
  Buffer<float> dx_buffer(*backend_, kBatch * image_size(g));
  backend_->col2im(ones.data(), dx_buffer.data(), g, kBatch);
  const auto counts = to_host(*backend_, dx_buffer);
  for (int n = 0; n < kBatch; ++n) {
    for (int y = 0; y < g.height; ++y) {
      for (int x = 0; x < g.width; ++x) {
        int covering = 0;
        for (int oy = 0; oy < g.out_height(); ++oy) {
          for (int ox = 0; ox < g.out_width(); ++ox) {
            const int ky = y - (oy * g.stride - g.padding);
            const int kx = x - (ox * g.stride - g.padding);
            if (ky >= 0 && ky < g.kernel && kx >= 0 && kx < g.kernel) ++covering;
          }
        }
        for (int c = 0; c < g.channels; ++c) {
          const std::size_t index = ((static_cast<std::size_t>(n) * g.height + y) * g.width + x) * g.channels + c;
          ASSERT_EQ(counts[index], static_cast<float>(covering)) << describe(g) << " at " << n << "," << y << "," << x;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Geometries, ConvolutionTest, ::testing::ValuesIn(kConvGeometries));

// Max pooling ---------------------------------------------------------------------------------------------------

// Values from a handful of levels, so that most windows hold ties; all negative in part, so that a maximum
// seeded with 0 instead of the window's first element would show.
std::vector<float> tied_values(std::size_t count, std::uint64_t seed) {
  auto values = random_floats(count, seed, -3.0f, 2.0f);
  for (float& value : values) value = std::floor(value);
  return values;
}

// 2x2/2 (the CNN's pool) on even and odd sizes (the last row/column is dropped), overlapping 3x3/2 windows,
// 3x3/3, and a window that covers the whole image.
const std::vector<PoolGeometry> kPoolGeometries{
    {.height = 4, .width = 4, .channels = 3, .window = 2, .stride = 2},
    {.height = 5, .width = 7, .channels = 2, .window = 2, .stride = 2},
    {.height = 28, .width = 28, .channels = 1, .window = 2, .stride = 2},
    {.height = 5, .width = 5, .channels = 2, .window = 3, .stride = 2},
    {.height = 6, .width = 7, .channels = 1, .window = 3, .stride = 3},
    {.height = 3, .width = 3, .channels = 5, .window = 3, .stride = 1},
    {.height = 2, .width = 2, .channels = 8, .window = 1, .stride = 1},
};

class MaxPoolTest : public BackendTest, public ::testing::WithParamInterface<PoolGeometry> {
 protected:
  static std::size_t in_count(const PoolGeometry& g) {
    return static_cast<std::size_t>(kBatch) * g.height * g.width * g.channels;
  }
  static std::size_t out_count(const PoolGeometry& g) {
    return static_cast<std::size_t>(kBatch) * g.out_height() * g.out_width() * g.channels;
  }
};

TEST_P(MaxPoolTest, ForwardTakesTheFirstMaximumOfEachWindow) {
  const PoolGeometry g = GetParam();
  for (std::uint64_t seed : {111u, 112u}) {
    const auto x = seed == 111u ? tied_values(in_count(g), seed) : random_floats(in_count(g), seed);
    auto x_buffer = to_backend(*backend_, x);
    Buffer<float> y_buffer(*backend_, out_count(g));
    Buffer<std::int32_t> argmax_buffer(*backend_, out_count(g));
    backend_->max_pool_forward(x_buffer.data(), y_buffer.data(), argmax_buffer.data(), g, kBatch);
    const PoolResult expected = reference_max_pool(x, g, kBatch);
    EXPECT_EQ(to_host(*backend_, y_buffer), expected.y) << describe(g);
    EXPECT_EQ(to_host(*backend_, argmax_buffer), expected.argmax) << describe(g);
  }
}

TEST_P(MaxPoolTest, BackwardScattersIntoTheArgmaxAndZeroesTheRest) {
  const PoolGeometry g = GetParam();
  const auto x = tied_values(in_count(g), 113);
  const auto dy = random_floats(out_count(g), 114);
  auto x_buffer = to_backend(*backend_, x);
  auto dy_buffer = to_backend(*backend_, dy);
  Buffer<float> y_buffer(*backend_, out_count(g));
  Buffer<std::int32_t> argmax_buffer(*backend_, out_count(g));
  Buffer<float> dx_buffer(*backend_, in_count(g));
  backend_->fill(dx_buffer.data(), dx_buffer.size(), std::numeric_limits<float>::quiet_NaN());  // overwritten
  backend_->max_pool_forward(x_buffer.data(), y_buffer.data(), argmax_buffer.data(), g, kBatch);
  backend_->max_pool_backward(dy_buffer.data(), argmax_buffer.data(), dx_buffer.data(), g, kBatch);

  const PoolResult reference = reference_max_pool(x, g, kBatch);
  std::vector<double> expected(in_count(g), 0.0);
  for (std::size_t i = 0; i < dy.size(); ++i) expected[reference.argmax[i]] += dy[i];  // overlapping windows sum
  const auto dx = to_host(*backend_, dx_buffer);
  for (std::size_t i = 0; i < dx.size(); ++i) ASSERT_NEAR(dx[i], expected[i], 1e-6) << describe(g) << " at " << i;
}

INSTANTIATE_TEST_SUITE_P(Geometries, MaxPoolTest, ::testing::ValuesIn(kPoolGeometries));

using MaxPoolNanTest = BackendTest;

TEST_F(MaxPoolNanTest, NanIsPropagated) {
  // A diverged layer must surface in the loss, not be pooled away by a comparison that is false for NaN.
  const PoolGeometry g{.height = 2, .width = 2, .channels = 2, .window = 2, .stride = 2};
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Channel 0: NaN after a number; channel 1: NaN first, then larger numbers.
  auto x_buffer = to_backend(*backend_, std::vector<float>{1.0f, nan, nan, 5.0f, 2.0f, 6.0f, 0.0f, 7.0f});
  Buffer<float> y_buffer(*backend_, 2);
  Buffer<std::int32_t> argmax_buffer(*backend_, 2);
  backend_->max_pool_forward(x_buffer.data(), y_buffer.data(), argmax_buffer.data(), g, 1);
  const auto y = to_host(*backend_, y_buffer);
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_TRUE(std::isnan(y[1]));
  EXPECT_EQ(to_host(*backend_, argmax_buffer), (std::vector<std::int32_t>{2, 1}));
}

}  // namespace
}  // namespace pstrain::compute::testing
