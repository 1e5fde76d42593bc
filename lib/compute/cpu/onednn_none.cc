// Builds without oneDNN: every convolution runs as im2col + gemm, every product on OpenBLAS.
#include "compute/cpu/onednn_convolution.h"
#include "compute/cpu/onednn_gemm.h"
#include "core/error.h"

namespace pstrain::compute {

std::unique_ptr<ConvolutionKernel> make_onednn_convolution(const ConvGeometry&, int, int) {
  return nullptr;
}

bool onednn_available() {
  return false;
}

void set_onednn_threads(int) {}

std::string onednn_sgemm_description() {
  return {};
}

bool prefers_onednn_sgemm(int, int, int) {
  return false;
}

void onednn_sgemm(bool, bool, int, int, int, float, const float*, int, const float*, int, float, float*, int) {
  PSTRAIN_ASSERT(false, "oneDNN's sgemm called in a build without oneDNN");
}

}  // namespace pstrain::compute
