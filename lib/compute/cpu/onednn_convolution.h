#pragma once
// Convolutions on oneDNN's primitives (what PyTorch runs on the CPU), for the CPU backend.
//
// Measured on this project's CI machine (AMD Zen 5, AVX-512, one thread), forward + both backward products with
// the layout changes: the cnn preset's 32->64 3x3 convolution at batch 64 takes 20.3 ms as im2col + OpenBLAS,
// 13.6 ms on oneDNN's direct kernel and 10.2 ms on its Winograd kernel; benchmarks/conv_kernels.sh measures what
// the backend chooses against im2col + gemm for the built-in models' layers (2.1-2.6x where Winograd runs, 1.4-1.5x
// for the cnn's first layer). oneDNN's fast kernels want their blocked layouts (given pstrain's NHWC, oneDNN 2.6
// falls back to its reference code), so x, y and the weight are reordered on the way in and out.
//
// The algorithm is a fixed rule, never a timing at start-up, so that a sync run gives the same bits every time:
//   Winograd F(4x4, 3x3) for 3x3 stride-1 kernels over 16 or more input channels (2x faster there; its transforms
//     cost digits: 1.2e-6 of the largest output off the exact sum on the cnn's layer, about 20 float ulps);
//   direct otherwise (the cnn's first layer, one input channel: Winograd is 6x slower there);
//   none (im2col + gemm) where oneDNN offers only its reference implementation.
#include <memory>

#include "compute/backend.h"

namespace pstrain::compute {

// Null where oneDNN has no fast kernel for this convolution, or pstrain was built without oneDNN.
std::unique_ptr<ConvolutionKernel> make_onednn_convolution(const ConvGeometry& geometry, int filters, int max_batch);

// Whether this build has oneDNN.
bool onednn_available();

// Sets the threads of oneDNN's OpenMP runtime (share_blas_threads gives it OpenBLAS's count); nothing without
// oneDNN.
void set_onednn_threads(int threads);

}  // namespace pstrain::compute
