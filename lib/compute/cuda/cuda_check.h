#pragma once
// One check macro per library. CUDA_CHECK and CUBLAS_CHECK turn a failed call into pstrain::Error(kInternal)
// naming the call, file:line and the library's own error string; CUDA_CHECK_NOTHROW logs the same instead of
// throwing, for destructors and release functions (noexcept). NCCL_CHECK is in cuda/nccl_check.h.
//
// Kernel launches are checked with CUDA_CHECK(cudaGetLastError()) right after the launch: that catches bad
// launch configurations; faults inside a kernel surface at the next synchronising call (copy_to_host,
// synchronize), which is checked too.
#include <cuda_runtime_api.h>

namespace pstrain::compute::cuda {

[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line);
void log_cuda_error(cudaError_t status, const char* call, const char* file, int line) noexcept;
// The status is passed as an int so that this header does not need cublas_v2.h.
[[noreturn]] void throw_cublas_error(int status, const char* call, const char* file, int line);

}  // namespace pstrain::compute::cuda

#define CUDA_CHECK(call)                                                                           \
  do {                                                                                             \
    const cudaError_t pstrain_cuda_status_ = (call);                                               \
    if (pstrain_cuda_status_ != cudaSuccess) {                                                     \
      ::pstrain::compute::cuda::throw_cuda_error(pstrain_cuda_status_, #call, __FILE__, __LINE__); \
    }                                                                                              \
  } while (0)

#define CUDA_CHECK_NOTHROW(call)                                                                 \
  do {                                                                                           \
    const cudaError_t pstrain_cuda_status_ = (call);                                             \
    if (pstrain_cuda_status_ != cudaSuccess) {                                                   \
      ::pstrain::compute::cuda::log_cuda_error(pstrain_cuda_status_, #call, __FILE__, __LINE__); \
    }                                                                                            \
  } while (0)

// Needs <cublas_v2.h> where it is used.
#define CUBLAS_CHECK(call)                                                                                    \
  do {                                                                                                        \
    const cublasStatus_t pstrain_cublas_status_ = (call);                                                     \
    if (pstrain_cublas_status_ != CUBLAS_STATUS_SUCCESS) {                                                    \
      ::pstrain::compute::cuda::throw_cublas_error(static_cast<int>(pstrain_cublas_status_), #call, __FILE__, \
                                                   __LINE__);                                                 \
    }                                                                                                         \
  } while (0)
