#pragma once
// CUDNN_CHECK: a failed cuDNN call becomes pstrain::Error(kInternal) naming the call, file:line and cuDNN's own
// error string (cudnnGetErrorString), as CUDA_CHECK and CUBLAS_CHECK do for their libraries (cuda_check.h).
// Needs <cudnn.h> where it is used.

namespace pstrain::compute::cuda {

// The status is passed as an int so that this header does not need cudnn.h.
[[noreturn]] void throw_cudnn_error(int status, const char* call, const char* file, int line);

}  // namespace pstrain::compute::cuda

#define CUDNN_CHECK(call)                                                                                              \
  do {                                                                                                                 \
    const cudnnStatus_t pstrain_cudnn_status_ = (call);                                                                \
    if (pstrain_cudnn_status_ != CUDNN_STATUS_SUCCESS) {                                                               \
      ::pstrain::compute::cuda::throw_cudnn_error(static_cast<int>(pstrain_cudnn_status_), #call, __FILE__, __LINE__); \
    }                                                                                                                  \
  } while (0)
