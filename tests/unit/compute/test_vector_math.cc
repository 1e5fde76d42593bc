// The vectorisable exp/tanh/sigmoid of the CPU backend against the C library in double precision, over their
// whole useful range, plus the edge cases a diverging run produces (inf, NaN).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "compute/cpu/vector_math.h"

namespace pstrain::compute::cpu {
namespace {

constexpr float kInfinity = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

TEST(VectorMath, ExpIsWithinAFewUlp) {
  for (float x = -87.0f; x <= 88.0f; x += 0.01237f) {
    const double expected = std::exp(static_cast<double>(x));
    ASSERT_NEAR(clamped_exp(x), expected, 4e-7 * expected) << "x=" << x;
  }
  EXPECT_EQ(clamped_exp(0.0f), 1.0f);
}

TEST(VectorMath, TanhIsAccurateAbsolutelyAndRelativelyNearZero) {
  for (float x = -20.0f; x <= 20.0f; x += 0.00731f) {
    const double expected = std::tanh(static_cast<double>(x));
    ASSERT_NEAR(vector_tanh(x), expected, 2.5e-7) << "x=" << x;
    if (std::abs(x) < 0.7f) {
      ASSERT_NEAR(vector_tanh(x), expected, 1e-6 * std::abs(expected)) << "x=" << x;
    }
  }
  EXPECT_EQ(vector_tanh(1e-30f), 1e-30f);
  EXPECT_EQ(vector_tanh(0.0f), 0.0f);
  EXPECT_EQ(vector_tanh(kInfinity), 1.0f);
  EXPECT_EQ(vector_tanh(-kInfinity), -1.0f);
}

TEST(VectorMath, SigmoidIsAccurate) {
  for (float x = -30.0f; x <= 30.0f; x += 0.00917f) {
    ASSERT_NEAR(vector_sigmoid(x), 1.0 / (1.0 + std::exp(-static_cast<double>(x))), 2e-7) << "x=" << x;
  }
  EXPECT_EQ(vector_sigmoid(0.0f), 0.5f);
  EXPECT_EQ(vector_sigmoid(kInfinity), 1.0f);
  EXPECT_NEAR(vector_sigmoid(-kInfinity), 0.0f, 1e-37f);
}

TEST(VectorMath, NanStaysNan) {
  EXPECT_TRUE(std::isnan(clamped_exp(kNan)));
  EXPECT_TRUE(std::isnan(vector_tanh(kNan)));
  EXPECT_TRUE(std::isnan(vector_sigmoid(kNan)));
}

}  // namespace
}  // namespace pstrain::compute::cpu
