#pragma once
// Matrix products on oneDNN's sgemm where it beats OpenBLAS without changing a bit.
//
// Measured one thread on this project's CI machine (benchmarks/gemm_providers.sh, AMD Zen 5, AVX-512): oneDNN
// 2.6's sgemm runs the MLP's and the dense layers' products that sum over at most 256 terms 7-11% faster than
// OpenBLAS 0.3.21's SkylakeX/Cooperlake kernels (784-256 dW at batch 256: 113.4 against 104.0 GFLOP/s; 256-128
// forward 108.2 against 101.4), and with the same bits: both sum each element's terms in order, in one block.
// Longer sums (the 784-input forward product) are blocked differently (5e-7 apart, no faster) and thin products
// (10 outputs) run faster on OpenBLAS; both stay there. The rule is fixed by the shape, so a product and any block
// of its rows (nn/layers/dense.cc streams dW in blocks) go to the same library.
#include <string>

namespace pstrain::compute {

// Whether the product goes to oneDNN: the build has it, k <= 256, and the product has at least 4096 elements.
bool prefers_onednn_sgemm(int m, int n, int k);

// For the log: which products go where ("" without oneDNN).
std::string onednn_sgemm_description();

// Row-major c = alpha op(a) op(b) + beta c with leading dimensions as stored, on oneDNN. Throws pstrain::Error
// (internal) when oneDNN reports an error; only called where prefers_onednn_sgemm() said so.
void onednn_sgemm(bool transpose_a, bool transpose_b, int m, int n, int k, float alpha, const float* a, int lda,
                  const float* b, int ldb, float beta, float* c, int ldc);

}  // namespace pstrain::compute
