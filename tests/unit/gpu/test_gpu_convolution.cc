// The GPU backend's convolutions on both of its paths against the CPU backend's im2col + gemm (the reference the
// model tests use): the cuDNN kernel (Backend::make_convolution with GpuConvolutions::kFastest) and im2col +
// cuBLAS (GpuConvolutions::kIm2colGemm). Forward output, weight, bias and input gradients, compared as whole
// tensors (norm_close, fp32, relative 1e-4): cuDNN's algorithms sum in their own order (Winograd and FFT ones
// transform), so single elements that cancel carry that order's rounding. Then a cuDNN convolution feeding a max
// pool, where the pool's choices are compared by a rule that does not depend on rounding (see
// expect_pool_choices_agree). Skips where there is no GPU; the cuDNN cases also skip where the machine has no
// cuDNN (benchmarks/gpu/run_checks.sh fails a GPU machine's run that skips).
#include <algorithm>
#include <cmath>
#include <string>

#include "backend_test_util.h"
#include "compute/cpu/cpu_backend.h"
#include "gpu_test_util.h"
#include "reference_ops.h"

namespace pstrain::compute::testing {
namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr int kFilters = 8;

struct ConvolutionOutputs {
  std::vector<float> y, dweight, dbias, dx;
};

struct ConvolutionInputs {
  std::vector<float> x, weight, bias, dy;
};

ConvolutionInputs random_inputs(const ConvGeometry& g, int filters, int batch, std::uint64_t seed) {
  const std::size_t outputs = static_cast<std::size_t>(batch) * g.out_height() * g.out_width() * filters;
  return {random_floats(image_count(g, batch), seed),
          random_floats(static_cast<std::size_t>(filters) * g.column_width(), seed + 1),
          random_floats(static_cast<std::size_t>(filters), seed + 2), random_floats(outputs, seed + 3)};
}

// One forward and one backward on `backend`, through `kernel` where given, else as conv2d.cc's im2col + gemm.
ConvolutionOutputs run_convolution(Backend& backend, ConvolutionKernel* kernel, const ConvGeometry& g, int filters,
                                   int batch, const ConvolutionInputs& in) {
  auto x = to_backend(backend, in.x), w = to_backend(backend, in.weight), b = to_backend(backend, in.bias),
       dy = to_backend(backend, in.dy);
  Buffer<float> y(backend, in.dy.size()), dw(backend, in.weight.size()), db(backend, in.bias.size()),
      dx(backend, in.x.size());
  for (Buffer<float>* out : {&y, &dw, &db, &dx}) backend.fill(out->data(), out->size(), kNan);  // all overwritten
  if (kernel != nullptr) {
    kernel->forward(x.data(), w.data(), b.data(), y.data(), batch);
    kernel->backward(x.data(), dy.data(), w.data(), dw.data(), db.data(), dx.data(), batch);
  } else {
    const int rows = batch * g.out_height() * g.out_width(), width = g.column_width();
    Buffer<float> columns(backend, static_cast<std::size_t>(rows) * width);
    backend.im2col(x.data(), columns.data(), g, batch);
    backend.gemm(false, true, rows, filters, width, 1.0f, columns.data(), w.data(), 0.0f, y.data());
    backend.add_row_bias(y.data(), b.data(), rows, filters);
    backend.gemm(true, false, filters, width, rows, 1.0f, dy.data(), columns.data(), 0.0f, dw.data());
    backend.sum_rows(dy.data(), db.data(), rows, filters, 0.0f);
    backend.gemm(false, false, rows, width, filters, 1.0f, dy.data(), w.data(), 0.0f, columns.data());
    backend.col2im(columns.data(), dx.data(), g, batch);
  }
  return {to_host(backend, y), to_host(backend, dw), to_host(backend, db), to_host(backend, dx)};
}

void expect_same_convolution(const ConvolutionOutputs& gpu, const ConvolutionOutputs& cpu) {
  EXPECT_TRUE(norm_close(gpu.y, cpu.y)) << "y";
  EXPECT_TRUE(norm_close(gpu.dweight, cpu.dweight)) << "dweight";
  EXPECT_TRUE(norm_close(gpu.dbias, cpu.dbias)) << "dbias";
  EXPECT_TRUE(norm_close(gpu.dx, cpu.dx)) << "dx";
}

class GpuConvolutionPathTest : public ::testing::TestWithParam<ConvGeometry> {
 protected:
  void SetUp() override {
    if (gpu_count() == 0) GTEST_SKIP() << "no GPU";
  }
  CpuBackend cpu_{CpuConvolutions::kIm2colGemm};
};

TEST_P(GpuConvolutionPathTest, CudnnMatchesCpuAtTheLargestAndASmallerBatch) {
  const ConvGeometry g = GetParam();
  auto gpu = make_gpu_backend(0, GpuConvolutions::kFastest);
  const int max_batch = 32;
  auto kernel = gpu->make_convolution(g, kFilters, max_batch);
  if (!kernel) GTEST_SKIP() << "no cuDNN kernel for this shape on this machine (the log says why)";
  EXPECT_NE(kernel->description().find("cuDNN"), std::string::npos) << kernel->description();
  for (int batch : {max_batch, 3}) {  // the second batch size makes a second plan
    SCOPED_TRACE("batch " + std::to_string(batch) + ", " + kernel->description());
    const auto in = random_inputs(g, kFilters, batch, 200 + batch);
    expect_same_convolution(run_convolution(*gpu, kernel.get(), g, kFilters, batch, in),
                            run_convolution(cpu_, nullptr, g, kFilters, batch, in));
  }
}

TEST_P(GpuConvolutionPathTest, Im2colPathMatchesCpuAndMakesNoKernel) {
  const ConvGeometry g = GetParam();
  auto gpu = make_gpu_backend(0, GpuConvolutions::kIm2colGemm);
  EXPECT_EQ(gpu->make_convolution(g, kFilters, 16), nullptr);
  const auto in = random_inputs(g, kFilters, 16, 300);
  expect_same_convolution(run_convolution(*gpu, nullptr, g, kFilters, 16, in),
                          run_convolution(cpu_, nullptr, g, kFilters, 16, in));
}

INSTANTIATE_TEST_SUITE_P(Geometries, GpuConvolutionPathTest, ::testing::ValuesIn(kConvGeometries), GeometryName());

TEST(GpuCudnnConvolutionTest, WeightGradientWithoutAnInputGradient) {
  if (gpu_count() == 0) GTEST_SKIP() << "no GPU";
  auto gpu = make_gpu_backend(0);
  const ConvGeometry g{.height = 14, .width = 14, .channels = 32, .kernel = 3, .stride = 1, .padding = 1};
  auto kernel = gpu->make_convolution(g, 64, 8);
  if (!kernel) GTEST_SKIP() << "no cuDNN on this machine";
  const auto in = random_inputs(g, 64, 8, 400);
  auto x = to_backend(*gpu, in.x), w = to_backend(*gpu, in.weight), dy = to_backend(*gpu, in.dy);
  Buffer<float> dw(*gpu, in.weight.size());
  kernel->backward(x.data(), dy.data(), w.data(), dw.data(), nullptr, nullptr, 8);
  CpuBackend cpu(CpuConvolutions::kIm2colGemm);
  EXPECT_TRUE(norm_close(to_host(*gpu, dw), run_convolution(cpu, nullptr, g, 64, 8, in).dweight));
}

// Max pooling after a convolution: the two backends' convolution outputs differ by rounding, so where two entries of
// a window are (nearly) equal each backend may pick a different one. The rule: the pooled values agree (all_close),
// and each window's GPU choice holds, in the CPU's own input, a value within rounding of the CPU's maximum: a tie may
// go either way, but a gradient routed to a clearly smaller entry fails.
void expect_pool_choices_agree(const std::vector<float>& cpu_x, const std::vector<std::int32_t>& gpu_argmax,
                               const std::vector<std::int32_t>& cpu_argmax, double tolerance) {
  double scale = 0;
  for (const float value : cpu_x) scale = std::max(scale, std::abs(static_cast<double>(value)));
  std::size_t ties = 0;
  for (std::size_t i = 0; i < cpu_argmax.size(); ++i) {
    if (gpu_argmax[i] == cpu_argmax[i]) continue;
    ++ties;
    const double chosen = cpu_x[static_cast<std::size_t>(gpu_argmax[i])];
    const double best = cpu_x[static_cast<std::size_t>(cpu_argmax[i])];
    ASSERT_LE(best - chosen, tolerance * scale)
        << "window " << i << ": the GPU chose " << chosen << ", the CPU " << best;
  }
  ::testing::Test::RecordProperty("ties_broken_differently", static_cast<int>(ties));
}

TEST(GpuCudnnConvolutionTest, MaxPoolAfterCudnnChoosesAWindowMaximum) {
  if (gpu_count() == 0) GTEST_SKIP() << "no GPU";
  auto gpu = make_gpu_backend(0);
  CpuBackend cpu(CpuConvolutions::kIm2colGemm);
  const ConvGeometry g{.height = 28, .width = 28, .channels = 1, .kernel = 3, .stride = 1, .padding = 1};
  const PoolGeometry pool{.height = 28, .width = 28, .channels = kFilters, .window = 2, .stride = 2};
  const int batch = 16;
  auto kernel = gpu->make_convolution(g, kFilters, batch);
  if (!kernel) GTEST_SKIP() << "no cuDNN on this machine";
  auto in = random_inputs(g, kFilters, batch, 500);
  for (float& value : in.x) value = std::round(value * 4) / 4;  // coarse inputs: many exact ties in the windows
  auto pooled = [&](Backend& backend, ConvolutionKernel* k) {
    const auto conv = run_convolution(backend, k, g, kFilters, batch, in);
    auto x = to_backend(backend, conv.y);
    Buffer<float> y(backend, pool_out_count(pool, batch));
    Buffer<std::int32_t> argmax(backend, y.size());
    backend.max_pool_forward(x.data(), y.data(), argmax.data(), pool, batch);
    return std::make_tuple(conv.y, to_host(backend, y), to_host(backend, argmax));
  };
  const auto [gpu_x, gpu_y, gpu_argmax] = pooled(*gpu, kernel.get());
  const auto [cpu_x, cpu_y, cpu_argmax] = pooled(cpu, nullptr);
  EXPECT_TRUE(all_close(gpu_y, cpu_y));
  expect_pool_choices_agree(cpu_x, gpu_argmax, cpu_argmax, 1e-5);
}

}  // namespace
}  // namespace pstrain::compute::testing
