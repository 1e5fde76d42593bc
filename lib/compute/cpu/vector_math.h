#pragma once
// exp, tanh and sigmoid written as straight-line float arithmetic so that GCC vectorises the activation loops.
// glibc's expf/tanhf are opaque scalar calls (vector variants need -ffast-math, which would also license
// reassociation everywhere else), and with them tanh/sigmoid cost as much as a hidden layer's matrix product.
//
// Accuracy: exp within a few ulp (Cephes polynomial, range-reduced by ln 2); tanh and sigmoid within ~1e-7
// absolute. NaN inputs give NaN, so a diverged layer stays visible.
#include <bit>
#include <cstdint>

namespace pstrain::compute::cpu {

// exp(x) for x in [-87.3, 88]; inputs outside are clamped, which callers below only ever use where the result is
// then swamped by 1 (tanh, sigmoid), so neither overflow nor subnormal arithmetic can occur.
inline float clamped_exp(float x) {
  constexpr float kHighest = 88.0f;              // 2^127 * e^0.35 is still a finite float
  constexpr float kLowest = -87.3365447504019f;  // keeps 2^n normal
  const float clamped = x > kHighest ? kHighest : (x < kLowest ? kLowest : x);  // NaN becomes kLowest here...
  // Round to nearest by adding 1.5 * 2^23: exact for |v| < 2^22, and unlike floor() it vectorises without SSE4.1.
  constexpr float kRoundMagic = 12582912.0f;
  const float n = (clamped * 1.44269504088896341f + kRoundMagic) - kRoundMagic;
  // r = x - n ln2 in two steps (ln2 split into an exactly representable head and a tail) to keep r accurate.
  float r = clamped - n * 0.693359375f;
  r = r + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const auto biased_exponent = static_cast<std::int32_t>(n) + 127;  // n in [-126, 127]
  const float result = p * std::bit_cast<float>(biased_exponent << 23);
  return x != x ? x : result;  // ...and is restored here
}

inline float vector_tanh(float x) {
  const float magnitude = x < 0.0f ? -x : x;
  // Near 0, 1 - 2/(e^2x + 1) cancels; the odd Cephes polynomial is accurate there.
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = p * z * x + x;
  const float large_magnitude = 1.0f - 2.0f / (clamped_exp(2.0f * magnitude) + 1.0f);
  const float large = x < 0.0f ? -large_magnitude : large_magnitude;
  return magnitude < 0.625f ? small : large;  // NaN: the comparison fails and `large` carries the NaN
}

inline float vector_sigmoid(float x) {
  return 1.0f / (1.0f + clamped_exp(-x));
}

}  // namespace pstrain::compute::cpu
