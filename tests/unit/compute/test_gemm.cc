// gemm against a naive double-precision triple loop, for every transpose combination and sizes that are not
// multiples of any vector width.
#include <cmath>
#include <limits>
#include <tuple>

#include "backend_test_util.h"

namespace pstrain::compute::testing {
namespace {

struct GemmCase {
  bool transpose_a;
  bool transpose_b;
  int m, n, k;
};

// c = alpha * op(a) op(b) + beta * c, where a is stored m x k (or k x m when transposed), b k x n (or n x k).
std::vector<double> naive_gemm(const GemmCase& shape, float alpha, const std::vector<float>& a,
                               const std::vector<float>& b, float beta, const std::vector<float>& c) {
  std::vector<double> result(c.size());
  for (int i = 0; i < shape.m; ++i) {
    for (int j = 0; j < shape.n; ++j) {
      double sum = 0;
      for (int p = 0; p < shape.k; ++p) {
        const double a_ip = shape.transpose_a ? a[p * shape.m + i] : a[i * shape.k + p];
        const double b_pj = shape.transpose_b ? b[j * shape.k + p] : b[p * shape.n + j];
        sum += a_ip * b_pj;
      }
      const double old_c = beta == 0.0f ? 0.0 : static_cast<double>(beta) * c[i * shape.n + j];
      result[i * shape.n + j] = static_cast<double>(alpha) * sum + old_c;
    }
  }
  return result;
}

class GemmTest : public BackendTest, public ::testing::WithParamInterface<std::tuple<bool, bool, int>> {};

void check_gemm(Backend& backend, const GemmCase& shape, float alpha, float beta, bool garbage_c) {
  const auto a = random_floats(static_cast<std::size_t>(shape.m) * shape.k, 1);
  const auto b = random_floats(static_cast<std::size_t>(shape.k) * shape.n, 2);
  auto c = random_floats(static_cast<std::size_t>(shape.m) * shape.n, 3);
  // beta == 0 must overwrite: NaN in c would otherwise leak into the result.
  if (garbage_c) std::fill(c.begin(), c.end(), std::numeric_limits<float>::quiet_NaN());
  const auto expected = naive_gemm(shape, alpha, a, b, beta, c);

  auto a_buffer = to_backend(backend, a);
  auto b_buffer = to_backend(backend, b);
  auto c_buffer = to_backend(backend, c);
  backend.gemm(shape.transpose_a, shape.transpose_b, shape.m, shape.n, shape.k, alpha, a_buffer.data(), b_buffer.data(),
               beta, c_buffer.data());
  const auto actual = to_host(backend, c_buffer);
  for (std::size_t i = 0; i < actual.size(); ++i) {
    ASSERT_NEAR(actual[i], expected[i], 1e-5 * shape.k + 1e-6) << "element " << i;
  }
}

TEST_P(GemmTest, MatchesNaiveProductForOddSizes) {
  const auto [transpose_a, transpose_b, size_set] = GetParam();
  // The last two go to oneDNN's sgemm where the build has it (compute/cpu/onednn_gemm.h: k <= 256, m n >= 4096).
  const int sizes[][3] = {{1, 1, 1},    {3, 5, 7},     {17, 13, 9},   {64, 33, 129},
                          {2, 257, 31}, {67, 70, 100}, {40, 130, 256}};
  const auto& size = sizes[size_set];
  const GemmCase shape{transpose_a, transpose_b, size[0], size[1], size[2]};
  check_gemm(*backend_, shape, 1.0f, 0.0f, /*garbage_c=*/true);
  check_gemm(*backend_, shape, 0.5f, 0.25f, /*garbage_c=*/false);
  check_gemm(*backend_, shape, -1.5f, 1.0f, /*garbage_c=*/false);
}

INSTANTIATE_TEST_SUITE_P(AllTransposes, GemmTest,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool(), ::testing::Range(0, 7)));

// (A row block of a product is not the bits of the same rows of the whole product under every BLAS kernel family:
// OpenBLAS's Haswell kernels split a sum of 700 otherwise. A dense layer therefore computes dW in the same row
// blocks whether it streams them or not, and tests/unit/nn/test_parameter_stream.cc checks those bits.)

TEST_F(BackendTest, GemmStridedComputesOnPartsOfWiderMatrices) {
  // c (3 x 4, inside a 3 x 6 buffer) = a (3 x 2, inside 3 x 5) * b (2 x 4, inside 2 x 7).
  std::vector<float> a(15, 100.0f), b(14, 100.0f), c(18, -1.0f);
  for (int i = 0; i < 3; ++i)
    for (int p = 0; p < 2; ++p) a[i * 5 + p] = static_cast<float>(i + p);
  for (int p = 0; p < 2; ++p)
    for (int j = 0; j < 4; ++j) b[p * 7 + j] = static_cast<float>(p * j + 1);
  backend_->gemm_strided(false, false, 3, 4, 2, 1.0f, a.data(), 5, b.data(), 7, 0.0f, c.data(), 6);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 6; ++j) {
      const float expected = j < 4 ? static_cast<float>(i * 1 + (i + 1) * (j + 1)) : -1.0f;  // outside: untouched
      EXPECT_EQ(c[i * 6 + j], expected) << i << "," << j;
    }
  }
}

TEST_F(BackendTest, GemmWithEmptyInnerDimensionScalesC) {
  auto c = to_backend(*backend_, std::vector<float>{1, 2, 3, 4, 5, 6});
  backend_->gemm(false, false, 2, 3, 0, 1.0f, nullptr, nullptr, 0.5f, c.data());
  EXPECT_EQ(to_host(*backend_, c), (std::vector<float>{0.5f, 1, 1.5f, 2, 2.5f, 3}));
  backend_->gemm(true, true, 2, 3, 0, 1.0f, nullptr, nullptr, 0.0f, c.data());
  EXPECT_EQ(to_host(*backend_, c), std::vector<float>(6, 0.0f));
}

}  // namespace
}  // namespace pstrain::compute::testing
