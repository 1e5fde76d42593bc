// The CUDA kernels' per-element index arithmetic (compute/cuda/index_math.h), run on the host against the
// definitions in reference_ops.h. Runs in every build, with or without CUDA or a GPU: the geometry of the GPU
// convolution and pooling is checked even where the kernels themselves cannot run.
#include <cmath>
#include <limits>

#include "backend_test_util.h"
#include "compute/cuda/index_math.h"
#include "gpu_test_util.h"
#include "reference_ops.h"

namespace pstrain::compute::testing {
namespace {

using cuda::ConvShape;
using cuda::PoolShape;

constexpr int kBatch = 3;

ConvShape shape_of(const ConvGeometry& g) {
  return {g.height,  g.width,        g.channels,    g.kernel,        g.stride,
          g.padding, g.out_height(), g.out_width(), g.column_width()};
}

PoolShape shape_of(const PoolGeometry& g) {
  return {g.height, g.width, g.channels, g.window, g.stride, g.out_height(), g.out_width()};
}

std::vector<float> tied_values(std::size_t count, std::uint64_t seed) {
  auto values = random_floats(count, seed, -3.0f, 2.0f);
  for (float& value : values) value = std::floor(value);  // a few levels: most windows hold ties
  return values;
}

class IndexMathConvTest : public ::testing::TestWithParam<ConvGeometry> {};

TEST_P(IndexMathConvTest, Im2colValueMatchesTheDefinition) {
  const ConvGeometry g = GetParam();
  const auto x = random_floats(image_count(g, kBatch), 201);
  const auto expected = reference_im2col(x, g, kBatch);
  const ConvShape shape = shape_of(g);
  std::vector<float> columns(expected.size());
  for (std::size_t i = 0; i < columns.size(); ++i) columns[i] = cuda::im2col_value(x.data(), std::int64_t(i), shape);
  EXPECT_EQ(columns, expected);
}

TEST_P(IndexMathConvTest, Col2imValueIsTheAdjointOfIm2col) {
  const ConvGeometry g = GetParam();
  const auto columns = random_floats(column_count(g, kBatch), 202);
  const auto expected = reference_col2im(columns, g, kBatch);
  const ConvShape shape = shape_of(g);
  std::vector<float> dx(expected.size());
  for (std::size_t j = 0; j < dx.size(); ++j) dx[j] = cuda::col2im_value(columns.data(), std::int64_t(j), shape);
  EXPECT_TRUE(all_close(dx, expected, 1e-5));
}

INSTANTIATE_TEST_SUITE_P(Geometries, IndexMathConvTest, ::testing::ValuesIn(kConvGeometries), GeometryName());

class IndexMathPoolTest : public ::testing::TestWithParam<PoolGeometry> {};

TEST_P(IndexMathPoolTest, MaxPoolValueTakesTheFirstMaximum) {
  const PoolGeometry g = GetParam();
  const PoolShape shape = shape_of(g);
  for (std::uint64_t seed : {203u, 204u}) {
    const std::size_t count = pool_in_count(g, kBatch);
    const auto x = seed == 203u ? tied_values(count, seed) : random_floats(count, seed);
    const PoolResult expected = reference_max_pool(x, g, kBatch);
    PoolResult actual;
    for (std::size_t i = 0; i < expected.y.size(); ++i) {
      std::int64_t index = -1;
      actual.y.push_back(cuda::max_pool_value(x.data(), std::int64_t(i), shape, &index));
      actual.argmax.push_back(static_cast<std::int32_t>(index));
    }
    EXPECT_EQ(actual.y, expected.y);
    EXPECT_EQ(actual.argmax, expected.argmax);
  }
}

TEST_P(IndexMathPoolTest, MaxPoolGradientGathersFromEveryWindowThatChoseTheElement) {
  const PoolGeometry g = GetParam();
  const PoolShape shape = shape_of(g);
  const auto x = tied_values(pool_in_count(g, kBatch), 205);
  const auto dy = random_floats(pool_out_count(g, kBatch), 206);
  const PoolResult forward = reference_max_pool(x, g, kBatch);
  const auto expected = reference_max_pool_backward(dy, forward.argmax, x.size());
  std::vector<float> dx(x.size());
  for (std::size_t j = 0; j < dx.size(); ++j) {
    dx[j] = cuda::max_pool_gradient(dy.data(), forward.argmax.data(), std::int64_t(j), shape);
  }
  EXPECT_TRUE(all_close(dx, expected, 1e-6));
}

INSTANTIATE_TEST_SUITE_P(Geometries, IndexMathPoolTest, ::testing::ValuesIn(kPoolGeometries), GeometryName());

TEST(IndexMathPoolNanTest, TheFirstNanWins) {
  // As the CPU backend: a diverged layer must surface, not be pooled away.
  const PoolGeometry g{.height = 2, .width = 2, .channels = 2, .window = 2, .stride = 2};
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x{1.0f, nan, nan, 5.0f, 2.0f, 6.0f, 0.0f, 7.0f};
  std::int64_t index = -1;
  EXPECT_TRUE(std::isnan(cuda::max_pool_value(x.data(), 0, shape_of(g), &index)));
  EXPECT_EQ(index, 2);
  EXPECT_TRUE(std::isnan(cuda::max_pool_value(x.data(), 1, shape_of(g), &index)));
  EXPECT_EQ(index, 1);
}

}  // namespace
}  // namespace pstrain::compute::testing
