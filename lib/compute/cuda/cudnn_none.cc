// CUDA builds without cuDNN's headers: every convolution runs as im2col + cuBLAS.
#include "compute/cuda/cudnn_convolution.h"

namespace pstrain::compute::cuda {

struct CudnnConvolutions::Session {};

CudnnConvolutions::CudnnConvolutions(int device, cudaStream_t stream) : device_(device), stream_(stream) {}

CudnnConvolutions::~CudnnConvolutions() = default;

std::unique_ptr<ConvolutionKernel> CudnnConvolutions::make(Backend&, const ConvGeometry&, int, int) {
  return nullptr;
}

}  // namespace pstrain::compute::cuda
