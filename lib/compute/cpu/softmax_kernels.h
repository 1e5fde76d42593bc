#pragma once
// The two per-row passes of the softmax that used to be scalar loops: the first index of a row's maximum, and
// exp(row - shift). Both give exactly the bits of the scalar code they replace, so every trained model stays
// bit-identical (the model pins check it):
//
//  - first_max_index is the loop `if (row[c] > row[best]) best = c`: ties keep the first index, and a row with a
//    NaN anywhere takes that loop itself (NaN's comparisons make its answer depend on the order).
//  - shifted_exp is std::exp(float) element by element. On x86-64 glibc (2.28 onwards) runs its __expf_fma
//    variant on every CPU with AVX2 and FMA: double arithmetic with four fused multiply-adds, a 32-entry table
//    and one final rounding. On a CPU with AVX-512 the same operations run 8 doubles at a time here, with the
//    same constants; arguments that glibc sends down its special path (|x| >= 88, NaN, infinities) are handed
//    to std::exp itself. Elsewhere the scalar loop runs. The unit test compares every float in [-104, 0] and a
//    sample of the rest against std::exp.
//
// Why not libmvec's vector expf (gcc -ffast-math): it rounds differently (up to 4 ulp), which would change every
// trained model's bits, and -ffast-math would license reassociation everywhere else too.

namespace pstrain::compute::cpu {

// Index of the first largest element of row[0, count), count > 0; equal to the scalar loop above on any input.
int first_max_index(const float* row, int count);

// out[i] = std::exp(in[i] - shift) for i in [0, count), bit for bit; in and out may be the same array.
void shifted_exp(const float* in, float shift, float* out, int count);

// Whether this process runs the vector paths (the unit tests say which path they checked).
bool softmax_kernels_vectorised();

}  // namespace pstrain::compute::cpu
