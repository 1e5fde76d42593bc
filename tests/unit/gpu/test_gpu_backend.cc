// Every Backend operation on the GPU backend against the CPU backend (and, for convolution and pooling, against
// the definitions in reference_ops.h), on random inputs: relative error below 1e-4 in fp32 (see all_close), exact
// where the operation only moves or selects values. Skips where there is no GPU.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <thread>

#include "backend_test_util.h"
#include "core/error.h"
#include "gpu_test_util.h"
#include "reference_ops.h"

namespace pstrain::compute::testing {
namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

class GpuBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (gpu_count() == 0) GTEST_SKIP() << "no GPU";
    gpu_ = make_gpu_backend(0);
  }

  std::unique_ptr<Backend> cpu_ = make_cpu_backend();
  std::unique_ptr<Backend> gpu_;
};

TEST_F(GpuBackendTest, DescribesItself) {
  EXPECT_EQ(gpu_->name().rfind("cuda:0", 0), 0u) << gpu_->name();
  EXPECT_FALSE(gpu_->host_accessible());
  EXPECT_NE(gpu_->native_stream(), nullptr);
  Buffer<float> empty(*gpu_, 0);
  EXPECT_NE(empty.data(), nullptr);  // a real allocation, as on the CPU
}

TEST_F(GpuBackendTest, CopiesRoundTrip) {
  const auto values = random_floats(100003, 1);
  auto buffer = to_backend(*gpu_, values);
  EXPECT_EQ(to_host(*gpu_, buffer), values);
  const std::vector<std::int32_t> labels{0, 9, 4, -7, 123456};
  auto label_buffer = to_backend(*gpu_, labels);
  EXPECT_EQ(to_host(*gpu_, label_buffer), labels);
  gpu_->copy_from_host(buffer.data(), nullptr, 0);  // zero bytes: nothing to do
  gpu_->copy_to_host(nullptr, buffer.data(), 0);
}

TEST_F(GpuBackendTest, PageableSourceMayBeReusedAsSoonAsCopyFromHostReturns) {
  std::vector<float> source = random_floats(std::size_t{1} << 22, 2);
  const std::vector<float> original = source;
  Buffer<float> buffer(*gpu_, source.size());
  gpu_->copy_from_host(buffer.data(), source.data(), source.size() * sizeof(float));
  std::fill(source.begin(), source.end(), -1.0f);
  EXPECT_EQ(to_host(*gpu_, buffer), original);
}

TEST_F(GpuBackendTest, HostStagingRoundTrip) {
  const std::size_t count = 1000003;
  auto* staging = static_cast<float*>(gpu_->allocate_host_staging(count * sizeof(float)));
  ASSERT_NE(staging, nullptr);
  const auto values = random_floats(count, 3);
  std::memcpy(staging, values.data(), count * sizeof(float));
  Buffer<float> buffer(*gpu_, count);
  gpu_->copy_from_host(buffer.data(), staging, count * sizeof(float));
  gpu_->synchronize();  // page-locked sources stay queued until a synchronising call
  std::fill_n(staging, count, 0.0f);
  gpu_->scale(buffer.data(), count, 2.0f);
  gpu_->copy_to_host(staging, buffer.data(), count * sizeof(float));
  for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(staging[i], 2.0f * values[i]) << i;
  gpu_->release_host_staging(staging);
  gpu_->release_host_staging(gpu_->allocate_host_staging(0));
}

TEST_F(GpuBackendTest, FillAndScale) {
  // 20M elements is more than the kernels' grid covers in one pass: the grid-stride loops are exercised.
  for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{1000}, std::size_t{20000003}}) {
    const auto values = random_floats(count, 4);
    auto gpu = to_backend(*gpu_, values);
    auto cpu = to_backend(*cpu_, values);
    gpu_->scale(gpu.data(), count, -1.75f);
    cpu_->scale(cpu.data(), count, -1.75f);
    EXPECT_EQ(to_host(*gpu_, gpu), to_host(*cpu_, cpu)) << count;
    gpu_->fill(gpu.data(), count, 3.5f);
    EXPECT_EQ(to_host(*gpu_, gpu), std::vector<float>(count, 3.5f)) << count;
  }
}

struct GemmCase {
  int m, n, k;
};

TEST_F(GpuBackendTest, GemmAllTransposesAndOddSizes) {
  const std::vector<GemmCase> cases{{1, 1, 1},       {3, 5, 7},      {17, 33, 65}, {64, 10, 784},
                                    {128, 129, 127}, {300, 257, 31}, {1, 200, 3},  {97, 1, 500}};
  std::uint64_t seed = 10;
  for (const GemmCase& size : cases) {
    for (int transposes = 0; transposes < 4; ++transposes) {
      const bool transpose_a = (transposes & 1) != 0;
      const bool transpose_b = (transposes & 2) != 0;
      const auto a = random_floats(static_cast<std::size_t>(size.m) * size.k, ++seed);
      const auto b = random_floats(static_cast<std::size_t>(size.k) * size.n, ++seed);
      const auto c = random_floats(static_cast<std::size_t>(size.m) * size.n, ++seed);
      for (float beta : {0.0f, 0.5f, 1.0f}) {
        auto run = [&](Backend& backend) {
          auto a_buffer = to_backend(backend, a);
          auto b_buffer = to_backend(backend, b);
          auto c_buffer = to_backend(backend, beta == 0.0f ? std::vector<float>(c.size(), kNan) : c);
          backend.gemm(transpose_a, transpose_b, size.m, size.n, size.k, 1.25f, a_buffer.data(), b_buffer.data(), beta,
                       c_buffer.data());
          return to_host(backend, c_buffer);
        };
        EXPECT_TRUE(all_close(run(*gpu_), run(*cpu_)))
            << "m=" << size.m << " n=" << size.n << " k=" << size.k << " transpose_a=" << transpose_a
            << " transpose_b=" << transpose_b << " beta=" << beta;
      }
    }
  }
}

TEST_F(GpuBackendTest, GemmWithEmptyInnerDimensionScalesC) {
  const auto c = random_floats(12, 20);
  for (float beta : {0.0f, 1.0f, 2.0f}) {
    auto c_buffer = to_backend(*gpu_, beta == 0.0f ? std::vector<float>(c.size(), kNan) : c);
    gpu_->gemm(false, true, 3, 4, 0, 1.0f, nullptr, nullptr, beta, c_buffer.data());
    std::vector<float> expected(c.size());
    for (std::size_t i = 0; i < c.size(); ++i) expected[i] = beta == 0.0f ? 0.0f : beta * c[i];
    EXPECT_EQ(to_host(*gpu_, c_buffer), expected) << beta;
  }
}

TEST_F(GpuBackendTest, AddRowBias) {
  for (auto [rows, cols] : std::vector<std::pair<int, int>>{{1, 1}, {37, 19}, {50000, 3}, {64, 256}}) {
    const auto y = random_floats(static_cast<std::size_t>(rows) * cols, 30);
    const auto bias = random_floats(cols, 31);
    auto run = [&](Backend& backend) {
      auto y_buffer = to_backend(backend, y);
      auto bias_buffer = to_backend(backend, bias);
      backend.add_row_bias(y_buffer.data(), bias_buffer.data(), rows, cols);
      return to_host(backend, y_buffer);
    };
    EXPECT_EQ(run(*gpu_), run(*cpu_)) << rows << " x " << cols;  // one addition per element: exact
  }
}

TEST_F(GpuBackendTest, SumRowsWithBetaZeroOneAndOther) {
  // Few rows (one pass), many rows (chunk partials), more rows than 1024 chunks of 256 (larger chunks).
  const std::vector<std::pair<int, int>> sizes{{1, 1},    {3, 2},       {37, 19},    {256, 10},
                                               {7, 1000}, {100000, 32}, {300001, 5}, {0, 7}};
  for (auto [rows, cols] : sizes) {
    const auto x = random_floats(static_cast<std::size_t>(rows) * cols, 40);
    const auto out = random_floats(cols, 41);
    for (float beta : {0.0f, 1.0f, 0.5f}) {
      auto run = [&](Backend& backend) {
        auto x_buffer = to_backend(backend, x);
        // beta 0 must ignore what was there, NaN included.
        auto out_buffer = to_backend(backend, beta == 0.0f ? std::vector<float>(cols, kNan) : out);
        backend.sum_rows(x_buffer.data(), out_buffer.data(), rows, cols, beta);
        return to_host(backend, out_buffer);
      };
      // Against the exact sums, not the CPU's fp32 ones: 300,001 terms that cancel to a few units carry ~1e-4 of
      // relative rounding in any fp32 order (the H200 and the CPU differed by 1.3e-4 there, 2026-11-26). The
      // error is measured against the terms' magnitude; 1e-5 of it is 100 times the typical rounding of this
      // chunked order, and far below what one lost or doubled chunk (or a wrong beta) does.
      std::vector<double> exact(cols), magnitude(cols);
      for (int c = 0; c < cols; ++c) {
        exact[c] = beta == 0.0f ? 0.0 : static_cast<double>(beta) * out[c];
        magnitude[c] = std::abs(exact[c]);
        for (int r = 0; r < rows; ++r) {
          const double value = x[static_cast<std::size_t>(r) * cols + c];
          exact[c] += value;
          magnitude[c] += std::abs(value);
        }
      }
      const auto gpu = run(*gpu_);
      EXPECT_TRUE(sums_close(gpu, exact, magnitude, 1e-5)) << rows << " x " << cols << " beta " << beta;
      EXPECT_TRUE(sums_close(run(*cpu_), exact, magnitude, 1e-5)) << "the CPU: " << rows << " x " << cols;
      EXPECT_EQ(gpu, run(*gpu_)) << "not deterministic: " << rows << " x " << cols << " beta " << beta;
    }
  }
}

TEST_F(GpuBackendTest, ActivationsForwardAndBackward) {
  auto x = random_floats(100003, 50, -6.0f, 6.0f);
  for (float special : {0.0f, -0.0f, 1e-6f, -1e-6f, 30.0f, -30.0f, 100.0f, -100.0f}) x.push_back(special);
  const auto dy = random_floats(x.size(), 51);
  for (Activation activation : {Activation::kRelu, Activation::kTanh, Activation::kSigmoid}) {
    SCOPED_TRACE(to_string(activation));
    auto forward = [&](Backend& backend) {
      auto x_buffer = to_backend(backend, x);
      Buffer<float> y_buffer(backend, x.size());
      backend.activation_forward(activation, x_buffer.data(), y_buffer.data(), x.size());
      return to_host(backend, y_buffer);
    };
    const auto y_cpu = forward(*cpu_);
    const auto y_gpu = forward(*gpu_);
    EXPECT_TRUE(all_close(y_gpu, y_cpu));

    // In place (x == y), as the CPU backend allows.
    auto in_place = to_backend(*gpu_, x);
    gpu_->activation_forward(activation, in_place.data(), in_place.data(), x.size());
    EXPECT_EQ(to_host(*gpu_, in_place), y_gpu);

    // Backward from the same forward output on both.
    auto backward = [&](Backend& backend) {
      auto y_buffer = to_backend(backend, y_cpu);
      auto dy_buffer = to_backend(backend, dy);
      Buffer<float> dx_buffer(backend, x.size());
      backend.activation_backward(activation, y_buffer.data(), dy_buffer.data(), dx_buffer.data(), x.size());
      return to_host(backend, dx_buffer);
    };
    EXPECT_TRUE(all_close(backward(*gpu_), backward(*cpu_)));

    // NaN passes through every activation.
    auto nan_buffer = to_backend(*gpu_, std::vector<float>{kNan});
    gpu_->activation_forward(activation, nan_buffer.data(), nan_buffer.data(), 1);
    EXPECT_TRUE(std::isnan(to_host(*gpu_, nan_buffer)[0]));
  }
}

struct SoftmaxRun {
  Backend::LossResult result;
  std::vector<float> dlogits;
};

SoftmaxRun softmax_on(Backend& backend, const std::vector<float>& logits, const std::vector<std::int32_t>& labels,
                      int rows, int classes, bool gradient, float smoothing = 0.0f) {
  auto logits_buffer = to_backend(backend, logits);
  auto labels_buffer = to_backend(backend, labels);
  Buffer<float> dlogits(backend, logits.size());
  backend.fill(dlogits.data(), dlogits.size(), kNan);
  SoftmaxRun run;
  run.result = backend.softmax_cross_entropy(logits_buffer.data(), labels_buffer.data(),
                                             gradient ? dlogits.data() : nullptr, rows, classes, smoothing);
  if (gradient) run.dlogits = to_host(backend, dlogits);
  return run;
}

std::vector<std::int32_t> random_labels(int rows, int classes, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::vector<std::int32_t> labels(rows);
  for (auto& label : labels) label = static_cast<std::int32_t>(engine() % static_cast<std::uint64_t>(classes));
  return labels;
}

TEST_F(GpuBackendTest, SoftmaxCrossEntropyLossCorrectAndGradient) {
  std::uint64_t seed = 60;
  for (int rows : {1, 7, 64, 1000}) {
    for (int classes : {1, 2, 10, 33, 1000}) {
      // Logits up to +-20: without the max shift exp() would overflow.
      const auto logits = random_floats(static_cast<std::size_t>(rows) * classes, ++seed, -20.0f, 20.0f);
      const auto labels = random_labels(rows, classes, ++seed);
      const std::string where = std::to_string(rows) + " x " + std::to_string(classes);
      const SoftmaxRun cpu = softmax_on(*cpu_, logits, labels, rows, classes, true);
      const SoftmaxRun gpu = softmax_on(*gpu_, logits, labels, rows, classes, true);
      EXPECT_TRUE(relative_close(gpu.result.loss_sum, cpu.result.loss_sum)) << where;
      EXPECT_EQ(gpu.result.correct, cpu.result.correct) << where;
      EXPECT_TRUE(all_close(gpu.dlogits, cpu.dlogits)) << where;

      const SoftmaxRun no_gradient = softmax_on(*gpu_, logits, labels, rows, classes, false);
      EXPECT_EQ(no_gradient.result.loss_sum, gpu.result.loss_sum) << where << ": depends on dlogits or run";
      EXPECT_EQ(no_gradient.result.correct, gpu.result.correct) << where;
      const SoftmaxRun again = softmax_on(*gpu_, logits, labels, rows, classes, true);
      EXPECT_EQ(again.dlogits, gpu.dlogits) << where << ": not deterministic";
    }
  }
}

TEST_F(GpuBackendTest, SoftmaxCrossEntropyTiesCountTheFirstMaximum) {
  // Integer logits from three levels: most rows have several maxima; the first one is the prediction.
  const int rows = 500;
  const int classes = 40;
  auto logits = random_floats(static_cast<std::size_t>(rows) * classes, 70, 0.0f, 3.0f);
  for (float& logit : logits) logit = std::floor(logit);
  const auto labels = random_labels(rows, classes, 71);
  const SoftmaxRun cpu = softmax_on(*cpu_, logits, labels, rows, classes, false);
  const SoftmaxRun gpu = softmax_on(*gpu_, logits, labels, rows, classes, false);
  EXPECT_EQ(gpu.result.correct, cpu.result.correct);
  EXPECT_TRUE(relative_close(gpu.result.loss_sum, cpu.result.loss_sum));
}

TEST_F(GpuBackendTest, SoftmaxCrossEntropyRejectsBadLabelsAsTheCpuDoes) {
  const int rows = 9;
  const int classes = 5;
  const auto logits = random_floats(static_cast<std::size_t>(rows) * classes, 80);
  for (std::int32_t bad : {-1, 5, 1000}) {
    auto labels = random_labels(rows, classes, 81);
    labels[3] = bad;
    labels[7] = 4000;  // a later bad label: the message names the first, as on the CPU
    std::string cpu_message;
    try {
      softmax_on(*cpu_, logits, labels, rows, classes, true);
    } catch (const Error& error) {
      cpu_message = error.what();
    }
    try {
      softmax_on(*gpu_, logits, labels, rows, classes, true);
      ADD_FAILURE() << "label " << bad << " accepted";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ExitCode::kInputData);
      EXPECT_EQ(std::string(error.what()), cpu_message);
    }
  }
  // The backend is still usable after the error.
  const auto labels = random_labels(rows, classes, 82);
  EXPECT_TRUE(relative_close(softmax_on(*gpu_, logits, labels, rows, classes, true).result.loss_sum,
                             softmax_on(*cpu_, logits, labels, rows, classes, true).result.loss_sum));
  const auto empty = gpu_->softmax_cross_entropy(nullptr, nullptr, nullptr, 0, classes, 0.0f);
  EXPECT_EQ(empty.loss_sum, 0.0);
  EXPECT_EQ(empty.correct, 0u);
}

class GpuConvolutionTest : public GpuBackendTest, public ::testing::WithParamInterface<ConvGeometry> {};

TEST_P(GpuConvolutionTest, Im2colAndCol2imMatchCpuAndDefinition) {
  const ConvGeometry g = GetParam();
  for (int batch : {1, 3, 32}) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    const auto x = random_floats(image_count(g, batch), 90);
    const auto c = random_floats(column_count(g, batch), 91);
    auto run = [&](Backend& backend) {
      auto x_buffer = to_backend(backend, x);
      auto c_buffer = to_backend(backend, c);
      Buffer<float> columns(backend, c.size());
      Buffer<float> dx(backend, x.size());
      backend.fill(columns.data(), columns.size(), kNan);  // both must write every element
      backend.fill(dx.data(), dx.size(), kNan);
      backend.im2col(x_buffer.data(), columns.data(), g, batch);
      backend.col2im(c_buffer.data(), dx.data(), g, batch);
      return std::make_pair(to_host(backend, columns), to_host(backend, dx));
    };
    const auto [gpu_columns, gpu_dx] = run(*gpu_);
    const auto [cpu_columns, cpu_dx] = run(*cpu_);
    EXPECT_EQ(gpu_columns, cpu_columns);
    EXPECT_EQ(gpu_columns, reference_im2col(x, g, batch));
    EXPECT_TRUE(all_close(gpu_dx, cpu_dx));
    EXPECT_TRUE(all_close(gpu_dx, reference_col2im(c, g, batch)));
  }
}

INSTANTIATE_TEST_SUITE_P(Geometries, GpuConvolutionTest, ::testing::ValuesIn(kConvGeometries), GeometryName());

class GpuMaxPoolTest : public GpuBackendTest, public ::testing::WithParamInterface<PoolGeometry> {};

TEST_P(GpuMaxPoolTest, ForwardAndBackwardMatchCpuAndDefinition) {
  const PoolGeometry g = GetParam();
  for (int batch : {1, 3, 32}) {
    for (bool ties : {true, false}) {
      SCOPED_TRACE("batch " + std::to_string(batch) + (ties ? " with ties" : ""));
      auto x = random_floats(pool_in_count(g, batch), 100, -3.0f, 2.0f);
      if (ties) {
        for (float& value : x) value = std::floor(value);
      }
      const auto dy = random_floats(pool_out_count(g, batch), 101);
      auto run = [&](Backend& backend) {
        auto x_buffer = to_backend(backend, x);
        auto dy_buffer = to_backend(backend, dy);
        Buffer<float> y(backend, dy.size());
        Buffer<std::int32_t> argmax(backend, dy.size());
        Buffer<float> dx(backend, x.size());
        backend.fill(dx.data(), dx.size(), kNan);  // overwritten, zeros included
        backend.max_pool_forward(x_buffer.data(), y.data(), argmax.data(), g, batch);
        backend.max_pool_backward(dy_buffer.data(), argmax.data(), dx.data(), g, batch);
        return std::make_tuple(to_host(backend, y), to_host(backend, argmax), to_host(backend, dx));
      };
      const auto [gpu_y, gpu_argmax, gpu_dx] = run(*gpu_);
      const auto [cpu_y, cpu_argmax, cpu_dx] = run(*cpu_);
      const PoolResult reference = reference_max_pool(x, g, batch);
      EXPECT_EQ(gpu_y, cpu_y);
      EXPECT_EQ(gpu_argmax, cpu_argmax);
      EXPECT_EQ(gpu_y, reference.y);
      EXPECT_EQ(gpu_argmax, reference.argmax);
      EXPECT_TRUE(all_close(gpu_dx, cpu_dx));
      EXPECT_TRUE(all_close(gpu_dx, reference_max_pool_backward(dy, reference.argmax, x.size())));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Geometries, GpuMaxPoolTest, ::testing::ValuesIn(kPoolGeometries), GeometryName());

TEST_F(GpuBackendTest, MaxPoolPropagatesNanAsTheCpuDoes) {
  const PoolGeometry g{.height = 2, .width = 2, .channels = 2, .window = 2, .stride = 2};
  const std::vector<float> x{1.0f, kNan, kNan, 5.0f, 2.0f, 6.0f, 0.0f, 7.0f};
  auto x_buffer = to_backend(*gpu_, x);
  Buffer<float> y(*gpu_, 2);
  Buffer<std::int32_t> argmax(*gpu_, 2);
  gpu_->max_pool_forward(x_buffer.data(), y.data(), argmax.data(), g, 1);
  const auto values = to_host(*gpu_, y);
  EXPECT_TRUE(std::isnan(values[0]));
  EXPECT_TRUE(std::isnan(values[1]));
  EXPECT_EQ(to_host(*gpu_, argmax), (std::vector<std::int32_t>{2, 1}));
}

TEST_F(GpuBackendTest, StepBreakdownFromEventsCountsCompleteStepsAndResets) {
  EXPECT_EQ(cpu_->take_step_breakdown(), "");
  EXPECT_EQ(gpu_->take_step_breakdown(), "");
  Buffer<float> data(*gpu_, std::size_t{1} << 22);
  using Point = Backend::StepPoint;
  gpu_->mark_step(Point::kForwardDone);  // before any kStart: ignored
  for (int step = 0; step < 3; ++step) {
    for (Point point : {Point::kStart, Point::kBatchLoaded, Point::kForwardDone, Point::kBackwardDone}) {
      gpu_->mark_step(point);
      gpu_->fill(data.data(), data.size(), static_cast<float>(step));
    }
  }
  const std::string line = gpu_->take_step_breakdown();
  EXPECT_NE(line.find("mean of 3 steps"), std::string::npos) << line;
  EXPECT_EQ(gpu_->take_step_breakdown(), "");  // a new count
}

TEST_F(GpuBackendTest, UsableFromAnotherThread) {
  // Every operation makes the backend's device current on the calling thread.
  const auto a = random_floats(64 * 32, 110);
  const auto b = random_floats(32 * 16, 111);
  auto a_buffer = to_backend(*gpu_, a);
  auto b_buffer = to_backend(*gpu_, b);
  Buffer<float> c_buffer(*gpu_, 64 * 16);
  std::vector<float> from_thread;
  std::thread worker([&] {
    gpu_->gemm(false, false, 64, 16, 32, 1.0f, a_buffer.data(), b_buffer.data(), 0.0f, c_buffer.data());
    from_thread = to_host(*gpu_, c_buffer);
  });
  worker.join();
  auto cpu_a = to_backend(*cpu_, a);
  auto cpu_b = to_backend(*cpu_, b);
  Buffer<float> cpu_c(*cpu_, 64 * 16);
  cpu_->gemm(false, false, 64, 16, 32, 1.0f, cpu_a.data(), cpu_b.data(), 0.0f, cpu_c.data());
  EXPECT_TRUE(all_close(from_thread, to_host(*cpu_, cpu_c)));
}

}  // namespace
}  // namespace pstrain::compute::testing
