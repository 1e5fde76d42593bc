// oneDNN's convolutions (compute/cpu/onednn_convolution.h) against the definition, summed in double: forward,
// weight, bias and input gradients, on the shapes the built-in models use and on stride, padding and kernel
// sizes around them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "compute/cpu/onednn_convolution.h"
#include "core/error.h"

namespace pstrain::compute {
namespace {

struct Case {
  ConvGeometry geometry;
  int filters;
  int batch;
};

std::string describe(const Case& c) {
  const ConvGeometry& g = c.geometry;
  return cat(g.height, "x", g.width, "x", g.channels, " k", g.kernel, " s", g.stride, " p", g.padding, " -> ",
             c.filters, " filters, batch ", c.batch);
}

// The convolution's definition over NHWC x and {filters, k, k, C} weights, and its three adjoints, in double.
struct Reference {
  std::vector<double> y, dweight, dbias, dx;
};

Reference reference(const Case& c, const std::vector<float>& x, const std::vector<float>& w,
                    const std::vector<float>& b, const std::vector<float>& dy) {
  const ConvGeometry& g = c.geometry;
  const int oh = g.out_height(), ow = g.out_width(), k = g.kernel, ch = g.channels;
  Reference r{std::vector<double>(dy.size()), std::vector<double>(w.size()), std::vector<double>(b.size()),
              std::vector<double>(x.size())};
  for (int n = 0; n < c.batch; ++n) {
    for (int oy = 0; oy < oh; ++oy) {
      for (int ox = 0; ox < ow; ++ox) {
        for (int f = 0; f < c.filters; ++f) {
          const std::size_t out = ((static_cast<std::size_t>(n) * oh + oy) * ow + ox) * c.filters + f;
          double sum = b[f];
          r.dbias[f] += dy[out];
          for (int ky = 0; ky < k; ++ky) {
            for (int kx = 0; kx < k; ++kx) {
              const int iy = oy * g.stride - g.padding + ky, ix = ox * g.stride - g.padding + kx;
              if (iy < 0 || iy >= g.height || ix < 0 || ix >= g.width) continue;
              for (int i = 0; i < ch; ++i) {
                const std::size_t in = ((static_cast<std::size_t>(n) * g.height + iy) * g.width + ix) * ch + i;
                const std::size_t wi = ((static_cast<std::size_t>(f) * k + ky) * k + kx) * ch + i;
                sum += static_cast<double>(x[in]) * w[wi];
                r.dweight[wi] += static_cast<double>(dy[out]) * x[in];
                r.dx[in] += static_cast<double>(dy[out]) * w[wi];
              }
            }
          }
          r.y[out] = sum;
        }
      }
    }
  }
  return r;
}

// max |got - want| / max |want|: the error relative to the result's scale, as float rounding makes it.
double relative_error(const std::vector<float>& got, const std::vector<double>& want) {
  double error = 0, scale = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    error = std::max(error, std::abs(got[i] - want[i]));
    scale = std::max(scale, std::abs(want[i]));
  }
  return error / scale;
}

class OnednnConvolutionTest : public ::testing::TestWithParam<Case> {};

TEST_P(OnednnConvolutionTest, ForwardAndGradientsMatchTheDefinition) {
  if (!onednn_available()) GTEST_SKIP() << "this build has no oneDNN";
  const Case& c = GetParam();
  const ConvGeometry& g = c.geometry;
  auto kernel = make_onednn_convolution(g, c.filters, c.batch);
  if (!kernel) GTEST_SKIP() << "oneDNN has no fast kernel for " << describe(c) << " (im2col + gemm runs it)";
  std::mt19937 engine(7);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  const auto random = [&](std::size_t count) {
    std::vector<float> values(count);
    for (float& v : values) v = unit(engine);
    return values;
  };
  const std::size_t pixels = static_cast<std::size_t>(g.out_height()) * g.out_width();
  const auto x = random(static_cast<std::size_t>(c.batch) * g.height * g.width * g.channels);
  const auto w = random(static_cast<std::size_t>(c.filters) * g.kernel * g.kernel * g.channels);
  const auto b = random(static_cast<std::size_t>(c.filters));
  const auto dy = random(c.batch * pixels * c.filters);
  const Reference want = reference(c, x, w, b, dy);

  std::vector<float> y(dy.size()), dweight(w.size()), dbias(b.size()), dx(x.size(), 1e30f);
  kernel->forward(x.data(), w.data(), b.data(), y.data(), c.batch);
  kernel->backward(x.data(), dy.data(), w.data(), dweight.data(), dbias.data(), dx.data(), c.batch);
  // Winograd's transforms cost some digits (about 1e-5 here); the direct kernels stay near float's 6e-8.
  const double tolerance = 1e-4;
  EXPECT_LT(relative_error(y, want.y), tolerance) << describe(c) << ": y, " << kernel->description();
  EXPECT_LT(relative_error(dweight, want.dweight), tolerance) << describe(c) << ": dweight";
  EXPECT_LT(relative_error(dbias, want.dbias), tolerance) << describe(c) << ": dbias";
  EXPECT_LT(relative_error(dx, want.dx), tolerance) << describe(c) << ": dx (overwritten)";

  // Without a bias the output is the product alone; a smaller batch than the kernel was made for works.
  std::vector<float> y_without(dy.size());
  kernel->forward(x.data(), w.data(), nullptr, y_without.data(), c.batch);
  std::vector<double> product = want.y;
  for (std::size_t i = 0; i < product.size(); ++i) product[i] -= b[i % b.size()];
  EXPECT_LT(relative_error(y_without, product), tolerance) << describe(c) << ": y without bias";
  if (c.batch > 1) {
    std::vector<float> first(pixels * c.filters);
    kernel->forward(x.data(), w.data(), b.data(), first.data(), 1);
    EXPECT_LT(relative_error(first, {want.y.begin(), want.y.begin() + static_cast<std::ptrdiff_t>(first.size())}),
              tolerance)
        << describe(c) << ": batch 1";
  }
}

ConvGeometry geometry(int h, int w, int c, int k, int s, int p) {
  ConvGeometry g;
  g.height = h;
  g.width = w;
  g.channels = c;
  g.kernel = k;
  g.stride = s;
  g.padding = p;
  return g;
}

INSTANTIATE_TEST_SUITE_P(Shapes, OnednnConvolutionTest,
                         ::testing::Values(Case{geometry(28, 28, 1, 3, 1, 1), 32, 4},   // cnn conv1: direct
                                           Case{geometry(14, 14, 32, 3, 1, 1), 64, 4},  // cnn conv2: Winograd
                                           Case{geometry(7, 7, 64, 3, 1, 1), 64, 3},    // resnet block
                                           Case{geometry(9, 9, 16, 3, 1, 1), 24, 2},    // odd size, Winograd
                                           Case{geometry(10, 10, 3, 3, 2, 1), 8, 2},    // stride 2
                                           Case{geometry(8, 8, 4, 5, 1, 0), 6, 2},      // 5x5, no padding
                                           Case{geometry(6, 6, 20, 1, 1, 0), 10, 3}));  // 1x1

}  // namespace
}  // namespace pstrain::compute
