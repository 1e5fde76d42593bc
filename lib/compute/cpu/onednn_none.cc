// Builds without oneDNN: every convolution runs as im2col + gemm.
#include "compute/cpu/onednn_convolution.h"

namespace pstrain::compute {

std::unique_ptr<ConvolutionKernel> make_onednn_convolution(const ConvGeometry&, int, int) {
  return nullptr;
}

bool onednn_available() {
  return false;
}

void set_onednn_threads(int) {}

}  // namespace pstrain::compute
