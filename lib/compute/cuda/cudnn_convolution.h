#pragma once
// Convolutions on cuDNN (forward, backward data, backward filter), for the CUDA backend: what
// Backend::make_convolution gives on a GPU where this build has cuDNN support and the machine has a cuDNN 9
// (cudnn_api.h says where it is looked for); else null, and the layer runs im2col + cuBLAS as before.
// The tensors stay in pstrain's layouts, which cuDNN reads directly: x and y NHWC (CUDNN_TENSOR_NHWC), the
// weight {filters, k, k, C} (a filter in CUDNN_TENSOR_NHWC, i.e. KRSC). The bias is added and summed by the
// backend's own kernels (add_row_bias, sum_rows: deterministic, already tested). cudnn_algorithms.h says how the
// algorithms are chosen. A build without cuDNN support compiles cudnn_none.cc instead.
#include <cuda_runtime_api.h>

#include <memory>

#include "compute/backend.h"

namespace pstrain::compute::cuda {

// The cuDNN side of one CUDA backend: the handle (on the backend's stream) and one workspace shared by all its
// convolutions, made when the first convolution asks for them, so that a model without convolutions never loads
// cuDNN. The kernels it makes refer to it: it must outlive them (the backend outlives its models).
class CudnnConvolutions {
 public:
  CudnnConvolutions(int device, cudaStream_t stream);
  ~CudnnConvolutions();
  CudnnConvolutions(const CudnnConvolutions&) = delete;
  CudnnConvolutions& operator=(const CudnnConvolutions&) = delete;

  // A cuDNN kernel for this convolution, or null (no cuDNN, or no acceptable algorithm: the reason is logged).
  // `backend` runs the bias operations.
  std::unique_ptr<ConvolutionKernel> make(Backend& backend, const ConvGeometry& geometry, int filters, int max_batch);

  struct Session;

 private:
  int device_;
  cudaStream_t stream_;
  std::unique_ptr<Session> session_;
  bool unavailable_ = false;  // cuDNN did not load or start on this backend: never try again
};

}  // namespace pstrain::compute::cuda
