#include "compute/cpu/softmax_kernels.h"

#include <bit>
#include <cmath>
#include <cstdint>

#if defined(__x86_64__)
// GCC 12's own AVX-512 headers warn that their _mm512_undefined_* placeholders are uninitialised (GCC bug
// 105593, fixed in GCC 13); the warning is about the header, not about this file.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#endif

namespace pstrain::compute::cpu {
namespace {

int scalar_first_max_index(const float* row, int count) {
  int best = 0;
  for (int c = 1; c < count; ++c) {
    if (row[c] > row[best]) best = c;
  }
  return best;
}

void scalar_shifted_exp(const float* in, float shift, float* out, int count) {
  for (int i = 0; i < count; ++i) out[i] = std::exp(in[i] - shift);
}

#if defined(__x86_64__)

// glibc 2.36's __exp2f_data (sysdeps/ieee754/flt-32/e_exp2f_data.c), as its __expf_fma reads them: the table
// holds 2^(i/32) with i << 47 taken out of the bits, so that adding k << 47 scales by 2^(k/32) exactly.
constexpr std::uint64_t kTable[32] = {0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51,
                                      0x3fef72b83c7d517b, 0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1,
                                      0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
                                      0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585,
                                      0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
                                      0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
                                      0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069,
                                      0x3fef5818dcfba487, 0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540};
constexpr std::uint64_t kInverseLn2Scaled = 0x40471547652b82fe;  // 32 / ln 2
constexpr std::uint64_t kPoly0 = 0x3ebc6af84b912394;             // 2^(r/32) ~ 1 + C2 r + C1 r^2 + C0 r^3
constexpr std::uint64_t kPoly1 = 0x3f2ebfce50fac4f3;
constexpr std::uint64_t kPoly2 = 0x3f962e42ff0c52d6;
constexpr std::uint64_t kShift = 0x4338000000000000;  // 1.5 * 2^52: adding it rounds to an integer
constexpr std::uint32_t kSpecialAbsTop = 0x42a;       // glibc's top12(88.0f) - 1: above it, its special path

__attribute__((target("avx512f"))) __m512d broadcast(std::uint64_t bits) {
  return _mm512_set1_pd(std::bit_cast<double>(bits));
}

// Eight lanes of __expf_fma's main path, operation for operation (its disassembly: the fused multiply-adds are
// InvLn2N*x + Shift, InvLn2N*x - kd, C0*r + C1, C2*r + 1 and z*r^2 + y; everything else is one rounding each).
__attribute__((target("avx512f"))) __m256 exp_main_path(__m256 x, const __m512d (&table)[4]) {
  const __m512d xd = _mm512_cvtps_pd(x);
  const __m512d shift = broadcast(kShift);
  const __m512d inverse_ln2 = broadcast(kInverseLn2Scaled);
  const __m512d shifted = _mm512_fmadd_pd(inverse_ln2, xd, shift);
  const __m512i ki = _mm512_castpd_si512(shifted);
  const __m512d kd = _mm512_sub_pd(shifted, shift);
  const __m512d r = _mm512_fmsub_pd(inverse_ln2, xd, kd);
  // T[ki % 32]: two 16-entry permutes (index bits 0-3), bit 4 picks between them.
  const __m512d low = _mm512_permutex2var_pd(table[0], ki, table[1]);
  const __m512d high = _mm512_permutex2var_pd(table[2], ki, table[3]);
  const __m512d t = _mm512_mask_blend_pd(_mm512_test_epi64_mask(ki, _mm512_set1_epi64(16)), low, high);
  const __m512d s = _mm512_castsi512_pd(_mm512_add_epi64(_mm512_castpd_si512(t), _mm512_slli_epi64(ki, 47)));
  const __m512d z = _mm512_fmadd_pd(r, broadcast(kPoly0), broadcast(kPoly1));
  const __m512d r2 = _mm512_mul_pd(r, r);
  __m512d y = _mm512_fmadd_pd(r, broadcast(kPoly2), _mm512_set1_pd(1.0));
  y = _mm512_fmadd_pd(z, r2, y);
  return _mm512_cvtpd_ps(_mm512_mul_pd(y, s));
}

__attribute__((target("avx512f"))) void avx512_shifted_exp(const float* in, float shift, float* out, int count) {
  __m512d table[4];
  for (int i = 0; i < 4; ++i) table[i] = _mm512_castsi512_pd(_mm512_loadu_si512(kTable + 8 * i));
  const __m256 shift8 = _mm256_set1_ps(shift);
  const __m256i special_above = _mm256_set1_epi32(static_cast<int>(kSpecialAbsTop));
  int i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m256 x = _mm256_sub_ps(_mm256_loadu_ps(in + i), shift8);
    const __m256i abs_top = _mm256_and_si256(_mm256_srli_epi32(_mm256_castps_si256(x), 20), _mm256_set1_epi32(0x7ff));
    const int special = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(abs_top, special_above)));
    _mm256_storeu_ps(out + i, exp_main_path(x, table));
    if (special != 0) {  // overflow, underflow, infinities, NaN: glibc's own branches, errno aside
      alignas(32) float lanes[8];
      _mm256_store_ps(lanes, x);
      for (int lane = 0; lane < 8; ++lane) {
        if ((special >> lane) & 1) out[i + lane] = std::exp(lanes[lane]);
      }
    }
  }
  scalar_shifted_exp(in + i, shift, out + i, count - i);
}

__attribute__((target("avx512f"))) int avx512_first_max_index(const float* row, int count) {
  __m512 max16 = _mm512_set1_ps(row[0]);
  __mmask16 unordered = 0;
  int c = 0;
  for (; c + 16 <= count; c += 16) {
    const __m512 v = _mm512_loadu_ps(row + c);
    unordered |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    max16 = _mm512_max_ps(max16, v);
  }
  float max = _mm512_reduce_max_ps(max16);
  for (int tail = c; tail < count; ++tail) {
    if (row[tail] != row[tail]) unordered = 1;
    max = row[tail] > max ? row[tail] : max;
  }
  if (unordered != 0) return scalar_first_max_index(row, count);
  // Without NaN the scalar loop's answer is the first element equal to the maximum (-0 == +0 included).
  const __m512 target = _mm512_set1_ps(max);
  for (c = 0; c + 16 <= count; c += 16) {
    const __mmask16 equal = _mm512_cmp_ps_mask(_mm512_loadu_ps(row + c), target, _CMP_EQ_OQ);
    if (equal != 0) return c + std::countr_zero(static_cast<unsigned>(equal));
  }
  for (; c < count; ++c) {
    if (row[c] == max) return c;
  }
  return scalar_first_max_index(row, count);  // not reached: the maximum is in the row
}

const bool kVectorised = __builtin_cpu_supports("avx512f");

#pragma GCC diagnostic pop
#else
const bool kVectorised = false;
#endif

}  // namespace

int first_max_index(const float* row, int count) {
#if defined(__x86_64__)
  if (kVectorised) return avx512_first_max_index(row, count);
#endif
  return scalar_first_max_index(row, count);
}

void shifted_exp(const float* in, float shift, float* out, int count) {
#if defined(__x86_64__)
  if (kVectorised) return avx512_shifted_exp(in, shift, out, count);
#endif
  scalar_shifted_exp(in, shift, out, count);
}

bool softmax_kernels_vectorised() {
  return kVectorised;
}

}  // namespace pstrain::compute::cpu
