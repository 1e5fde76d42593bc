// The softmax's row kernels against the scalar code they replaced, bit for bit: shifted_exp against std::exp over
// the float range (every float the softmax can meet, since its arguments are row - max <= 0, and a sample of the
// rest), and first_max_index against the scalar "first strictly greater" loop on ties, signed zeros,
// infinities, NaN and every tail length.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "compute/cpu/softmax_kernels.h"

namespace pstrain::compute::cpu {
namespace {

// The loop the softmax ran before (and still runs on CPUs without AVX-512).
int reference_first_max_index(const std::vector<float>& row) {
  int best = 0;
  for (int c = 1; c < static_cast<int>(row.size()); ++c) {
    if (row[c] > row[best]) best = c;
  }
  return best;
}

// Checks shifted_exp on the floats whose bit patterns are first, first + stride, ... < last (as uint64 bounds),
// in blocks of an awkward length so that the vector body and the scalar tail both run. Returns the mismatches.
std::uint64_t count_exp_mismatches(std::uint64_t first, std::uint64_t last, std::uint64_t stride, float shift) {
  constexpr int kBlock = 4093;
  std::vector<float> in(kBlock), out(kBlock);
  std::uint64_t mismatches = 0;
  std::uint64_t bits = first;
  while (bits < last) {
    int n = 0;
    for (; n < kBlock && bits < last; ++n, bits += stride)
      in[n] = std::bit_cast<float>(static_cast<std::uint32_t>(bits));
    shifted_exp(in.data(), shift, out.data(), n);
    for (int i = 0; i < n; ++i) {
      const float expected = std::exp(in[i] - shift);
      const bool same = std::bit_cast<std::uint32_t>(expected) == std::bit_cast<std::uint32_t>(out[i]) ||
                        (std::isnan(expected) && std::isnan(out[i]));
      if (!same && mismatches++ < 5) {
        ADD_FAILURE() << "exp(" << in[i] << " - " << shift << "): std::exp gives " << expected << ", shifted_exp "
                      << out[i];
      }
    }
  }
  return mismatches;
}

TEST(SoftmaxKernels, ShiftedExpEqualsStdExpOnEveryFloatFromMinus104ToZero) {
  // -0.0f is 0x80000000; -104.0f is 0xc2d00000; every pattern between is a float in [-104, -0] (the softmax's
  // whole domain: below -103.97 exp is 0, and glibc's special path starts at |x| >= 88).
  RecordProperty("vectorised", softmax_kernels_vectorised() ? "avx512" : "scalar");
  EXPECT_EQ(count_exp_mismatches(0x80000000u, 0xc2d00001u, 1, 0.0f), 0u);
}

TEST(SoftmaxKernels, ShiftedExpEqualsStdExpOnASampleOfAllFloatsIncludingSpecials) {
  // Stride 4099 (prime) over all 2^32 patterns: positives, overflow, subnormals, infinities and NaNs.
  EXPECT_EQ(count_exp_mismatches(0, 1ull << 32, 4099, 0.0f), 0u);
  std::vector<float> specials = {std::numeric_limits<float>::infinity(),
                                 -std::numeric_limits<float>::infinity(),
                                 std::numeric_limits<float>::quiet_NaN(),
                                 88.0f,
                                 88.72f,
                                 89.0f,
                                 -88.0f,
                                 -103.0f,
                                 -103.5f,
                                 -104.0f,
                                 0.0f,
                                 -0.0f,
                                 1e-30f,
                                 -1e-30f};
  std::vector<float> out(specials.size());
  shifted_exp(specials.data(), 0.0f, out.data(), static_cast<int>(specials.size()));
  for (std::size_t i = 0; i < specials.size(); ++i) {
    const float expected = std::exp(specials[i]);
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(out[i])) << specials[i];
    } else {
      EXPECT_EQ(std::bit_cast<std::uint32_t>(out[i]), std::bit_cast<std::uint32_t>(expected)) << specials[i];
    }
  }
}

TEST(SoftmaxKernels, ShiftedExpSubtractsTheShiftInFloatAndMayRunInPlace) {
  std::mt19937 random(7);
  std::normal_distribution<float> logit(0.0f, 8.0f);
  std::vector<float> row(1001);
  for (float& value : row) value = logit(random);
  const float shift = 3.25f;
  std::vector<float> expected(row.size());
  for (std::size_t i = 0; i < row.size(); ++i) expected[i] = std::exp(row[i] - shift);
  shifted_exp(row.data(), shift, row.data(), static_cast<int>(row.size()));
  for (std::size_t i = 0; i < row.size(); ++i) {
    EXPECT_EQ(std::bit_cast<std::uint32_t>(row[i]), std::bit_cast<std::uint32_t>(expected[i])) << i;
  }
}

TEST(SoftmaxKernels, FirstMaxIndexEqualsTheScalarLoopOnTiesZerosInfinitiesAndNaN) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::mt19937 random(11);
  std::uniform_int_distribution<int> small(-3, 3);  // many ties
  for (int count = 1; count <= 70; ++count) {
    for (int trial = 0; trial < 40; ++trial) {
      std::vector<float> row(static_cast<std::size_t>(count));
      for (float& value : row) value = static_cast<float>(small(random));
      const int kind = trial % 8;
      const auto at = static_cast<std::size_t>(std::uniform_int_distribution<int>(0, count - 1)(random));
      if (kind == 1) row[at] = nan;
      if (kind == 2) row[0] = nan;
      if (kind == 3) row[at] = inf;
      if (kind == 4) std::fill(row.begin(), row.end(), -inf);
      if (kind == 5) {  // the maximum is a zero of either sign
        for (float& value : row) value = value > 0 ? -value : value;
        row[at] = (trial & 16) ? -0.0f : 0.0f;
        row[count - 1 - at] = (trial & 16) ? 0.0f : -0.0f;
      }
      if (kind == 6) row[count - 1] = 100.0f;  // in the tail
      ASSERT_EQ(first_max_index(row.data(), count), reference_first_max_index(row))
          << "count " << count << " kind " << kind;
    }
  }
}

}  // namespace
}  // namespace pstrain::compute::cpu
