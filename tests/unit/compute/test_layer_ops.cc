// The backend operations behind the layer types beyond dense and convolution, on the CPU backend, against
// direct definitions computed here (double where sums are involved).
#include <cmath>

#include "backend_test_util.h"
#include "core/counter_random.h"
#include "core/error.h"

namespace pstrain::compute::testing {
namespace {

TEST_F(BackendTest, AveragePoolingMatchesItsDefinitionBothWays) {
  const PoolGeometry g{.height = 5, .width = 4, .channels = 2, .window = 2, .stride = 2};
  const int batch = 2;
  const auto x = random_floats(static_cast<std::size_t>(batch) * 5 * 4 * 2, 1);
  auto x_buffer = to_backend(*backend_, x);
  Buffer<float> y(*backend_, static_cast<std::size_t>(batch) * 2 * 2 * 2);
  backend_->avg_pool_forward(x_buffer.data(), y.data(), g, batch);
  const auto dy = random_floats(y.size(), 2);
  auto dy_buffer = to_backend(*backend_, dy);
  Buffer<float> dx(*backend_, x.size());
  backend_->avg_pool_backward(dy_buffer.data(), dx.data(), g, batch);
  const auto y_host = to_host(*backend_, y);
  const auto dx_host = to_host(*backend_, dx);
  std::vector<double> expected_dx(x.size(), 0.0);
  for (int n = 0; n < batch; ++n) {
    for (int oy = 0; oy < 2; ++oy) {
      for (int ox = 0; ox < 2; ++ox) {
        for (int c = 0; c < 2; ++c) {
          double sum = 0;
          for (int ky = 0; ky < 2; ++ky) {
            for (int kx = 0; kx < 2; ++kx) sum += x[((n * 5 + oy * 2 + ky) * 4 + ox * 2 + kx) * 2 + c];
          }
          const std::size_t out = ((n * 2 + oy) * 2 + ox) * 2 + c;
          EXPECT_NEAR(y_host[out], sum / 4, 1e-6);
          for (int ky = 0; ky < 2; ++ky) {
            for (int kx = 0; kx < 2; ++kx)
              expected_dx[((n * 5 + oy * 2 + ky) * 4 + ox * 2 + kx) * 2 + c] += dy[out] / 4;
          }
        }
      }
    }
  }
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(dx_host[i], expected_dx[i], 1e-6) << i;  // row 4: zero
}

TEST_F(BackendTest, SpatialMeanAveragesEveryPixelOfAChannel) {
  const int batch = 3, pixels = 5, channels = 4;
  const auto x = random_floats(batch * pixels * channels, 3);
  auto x_buffer = to_backend(*backend_, x);
  Buffer<float> y(*backend_, batch * channels);
  backend_->spatial_mean(x_buffer.data(), y.data(), batch, pixels, channels);
  const auto dy = random_floats(batch * channels, 4);
  auto dy_buffer = to_backend(*backend_, dy);
  Buffer<float> dx(*backend_, x.size());
  backend_->spatial_mean_backward(dy_buffer.data(), dx.data(), batch, pixels, channels);
  const auto y_host = to_host(*backend_, y);
  const auto dx_host = to_host(*backend_, dx);
  for (int n = 0; n < batch; ++n) {
    for (int c = 0; c < channels; ++c) {
      double sum = 0;
      for (int p = 0; p < pixels; ++p) {
        sum += x[(n * pixels + p) * channels + c];
        EXPECT_FLOAT_EQ(dx_host[(n * pixels + p) * channels + c], dy[n * channels + c] / pixels);
      }
      EXPECT_NEAR(y_host[n * channels + c], sum / pixels, 1e-6);
    }
  }
}

TEST_F(BackendTest, AddEqualsCopyThenAxpyOfOneBitForBitAndMayRunInPlace) {
  const auto a = random_floats(1031, 3), b = random_floats(1031, 4);
  auto a_buffer = to_backend(*backend_, a), b_buffer = to_backend(*backend_, b);
  Buffer<float> sum(*backend_, a.size()), reference(*backend_, a.size());
  backend_->add(a_buffer.data(), b_buffer.data(), sum.data(), a.size());
  backend_->copy(reference.data(), a_buffer.data(), a.size() * sizeof(float));
  backend_->axpy(1.0f, b_buffer.data(), reference.data(), a.size());
  const auto sum_host = to_host(*backend_, sum);
  EXPECT_EQ(sum_host, to_host(*backend_, reference));
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(sum_host[i], a[i] + b[i]) << i;
  backend_->add(a_buffer.data(), b_buffer.data(), a_buffer.data(), a.size());
  EXPECT_EQ(to_host(*backend_, a_buffer), sum_host);
}

TEST_F(BackendTest, CopyColumnsMovesABlockBetweenStrides) {
  const std::vector<float> source{1, 2, 3, 4, 5, 6};  // 2 rows of 3
  auto source_buffer = to_backend(*backend_, source);
  auto destination = to_backend(*backend_, std::vector<float>(8, -1.0f));  // 2 rows of 4
  backend_->copy_columns(source_buffer.data() + 1, 3, destination.data() + 2, 4, 2, 2);
  EXPECT_EQ(to_host(*backend_, destination), (std::vector<float>{-1, -1, 2, 3, -1, -1, 5, 6}));
}

TEST_F(BackendTest, BatchNormTrainingNormalisesAndMovesTheRunningStatistics) {
  const int rows = 6, channels = 3;
  const auto x = random_floats(rows * channels, 5, -2.0f, 3.0f);
  const std::vector<float> gamma{1.5f, 0.5f, -1.0f}, beta{0.1f, -0.2f, 0.3f};
  auto x_buffer = to_backend(*backend_, x);
  auto gamma_buffer = to_backend(*backend_, gamma);
  auto beta_buffer = to_backend(*backend_, beta);
  auto running_mean = to_backend(*backend_, std::vector<float>{0.5f, 0.0f, -0.5f});
  auto running_var = to_backend(*backend_, std::vector<float>{1.0f, 2.0f, 0.5f});
  Buffer<float> mean(*backend_, channels), inv_std(*backend_, channels), y(*backend_, x.size()), z(*backend_, x.size());
  const Backend::BatchNormTensors tensors{gamma_buffer.data(), beta_buffer.data(), running_mean.data(),
                                          running_var.data(),  mean.data(),        inv_std.data()};
  const float momentum = 0.25f, epsilon = 1e-3f;
  backend_->batch_norm_training(x_buffer.data(), y.data(), tensors, momentum, epsilon, rows, channels);
  const auto y_host = to_host(*backend_, y);
  const auto new_mean = to_host(*backend_, running_mean);
  const auto new_var = to_host(*backend_, running_var);
  const std::vector<double> old_mean{0.5, 0.0, -0.5}, old_var{1.0, 2.0, 0.5};
  for (int c = 0; c < channels; ++c) {
    double m = 0, v = 0;
    for (int r = 0; r < rows; ++r) m += x[r * channels + c];
    m /= rows;
    for (int r = 0; r < rows; ++r) v += (x[r * channels + c] - m) * (x[r * channels + c] - m);
    for (int r = 0; r < rows; ++r) {
      const double expected = gamma[c] * (x[r * channels + c] - m) / std::sqrt(v / rows + epsilon) + beta[c];
      EXPECT_NEAR(y_host[r * channels + c], expected, 1e-5);
    }
    EXPECT_NEAR(new_mean[c], (1 - momentum) * old_mean[c] + momentum * m, 1e-6);
    EXPECT_NEAR(new_var[c], (1 - momentum) * old_var[c] + momentum * v / (rows - 1), 1e-5);  // unbiased
  }
  // Evaluation normalises with the running statistics.
  backend_->batch_norm_inference(x_buffer.data(), z.data(), tensors, epsilon, rows, channels);
  const auto z_host = to_host(*backend_, z);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < channels; ++c) {
      const double expected =
          gamma[c] * (x[r * channels + c] - new_mean[c]) / std::sqrt(new_var[c] + epsilon) + beta[c];
      EXPECT_NEAR(z_host[r * channels + c], expected, 1e-5);
    }
  }
}

TEST_F(BackendTest, DropoutMaskIsAFunctionOfItsKeyWithTheRequestedRate) {
  const std::size_t count = 100000;
  const float rate = 0.3f;
  Buffer<float> first(*backend_, count), again(*backend_, count), other(*backend_, count);
  backend_->dropout_mask(first.data(), count, rate, 42);
  backend_->dropout_mask(again.data(), count, rate, 42);
  backend_->dropout_mask(other.data(), count, rate, combine_key(42, 1));
  const auto mask = to_host(*backend_, first);
  EXPECT_EQ(to_host(*backend_, again), mask);
  EXPECT_NE(to_host(*backend_, other), mask);
  std::size_t dropped = 0;
  for (const float value : mask) {
    ASSERT_TRUE(value == 0.0f || value == 1.0f / (1.0f - rate)) << value;
    dropped += value == 0.0f ? 1 : 0;
  }
  // Binomial(100000, 0.3): standard deviation ~145; 5 of them.
  EXPECT_NEAR(static_cast<double>(dropped), rate * count, 725.0);
  // Element i depends on (key, i) alone: a shorter mask is a prefix.
  Buffer<float> prefix(*backend_, 10);
  backend_->dropout_mask(prefix.data(), 10, rate, 42);
  EXPECT_TRUE(std::equal(mask.begin(), mask.begin() + 10, to_host(*backend_, prefix).begin()));
}

TEST_F(BackendTest, EmbeddingRowsGatherAndTheirGradientsSumPerRow) {
  const int rows = 4, dim = 3;
  const auto table = random_floats(rows * dim, 6);
  const std::vector<float> ids{2, 0, 2, 3, 2};
  auto table_buffer = to_backend(*backend_, table);
  auto ids_buffer = to_backend(*backend_, ids);
  Buffer<float> out(*backend_, ids.size() * dim);
  backend_->gather_rows(table_buffer.data(), ids_buffer.data(), out.data(), 5, dim, rows);
  const auto gathered = to_host(*backend_, out);
  for (int r = 0; r < 5; ++r) {
    for (int d = 0; d < dim; ++d) EXPECT_EQ(gathered[r * dim + d], table[static_cast<int>(ids[r]) * dim + d]);
  }
  const auto upstream = random_floats(ids.size() * dim, 7);
  auto upstream_buffer = to_backend(*backend_, upstream);
  auto gradient = to_backend(*backend_, std::vector<float>(rows * dim, 99.0f));  // overwritten, not added to
  backend_->scatter_add_rows(upstream_buffer.data(), ids_buffer.data(), gradient.data(), 5, dim, rows);
  const auto gradient_host = to_host(*backend_, gradient);
  for (int row = 0; row < rows; ++row) {
    for (int d = 0; d < dim; ++d) {
      double sum = 0;
      for (int r = 0; r < 5; ++r) sum += static_cast<int>(ids[r]) == row ? upstream[r * dim + d] : 0.0;
      EXPECT_NEAR(gradient_host[row * dim + d], sum, 1e-6);
    }
  }
}

TEST_F(BackendTest, EmbeddingIdsOutsideTheTableAreDataErrors) {
  auto table = to_backend(*backend_, std::vector<float>(6, 1.0f));
  Buffer<float> out(*backend_, 2);
  for (float bad : {3.0f, -1.0f, 0.5f}) {
    auto ids = to_backend(*backend_, std::vector<float>{bad});
    try {
      backend_->gather_rows(table.data(), ids.data(), out.data(), 1, 2, 3);
      FAIL() << "expected an error for id " << bad;
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ExitCode::kInputData);
      EXPECT_NE(std::string(error.what()).find("[0, 3)"), std::string::npos) << error.what();
    }
  }
}

}  // namespace
}  // namespace pstrain::compute::testing
