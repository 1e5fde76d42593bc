#include "compute/cuda/cuda_check.h"

#include <cublas_v2.h>

#include "compute/cuda/cublas_api.h"

#include "core/error.h"
#include "core/log.h"

namespace pstrain::compute::cuda {

namespace {

std::string describe(cudaError_t status, const char* call, const char* file, int line) {
  return cat("CUDA call ", call, " failed at ", file, ":", line, ": ", cudaGetErrorString(status), " (",
             cudaGetErrorName(status), ")");
}

}  // namespace

// The runtime also keeps a failed call's status as its "last error", which the launch checks read with
// cudaGetLastError: reset it here, or a later, successful launch would be reported with this failure. (Sticky
// errors, such as a kernel's illegal address, stay: the context is then unusable anyway.)
void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  (void)cudaGetLastError();
  throw Error(ExitCode::kInternal, describe(status, call, file, line));
}

void log_cuda_error(cudaError_t status, const char* call, const char* file, int line) noexcept {
  (void)cudaGetLastError();
  // At process exit the runtime may be unloaded before the last buffer is released; the memory goes with the
  // process, and there is nothing to report.
  if (status == cudaErrorCudartUnloading) return;
  try {
    log_warning(describe(status, call, file, line));
  } catch (...) {
    // Logging itself failed (out of memory): nothing more can be done from a noexcept path.
  }
}

void throw_cublas_error(int status, const char* call, const char* file, int line) {
  throw Error(ExitCode::kInternal,
              cat("cuBLAS call ", call, " failed at ", file, ":", line, ": ",
                  cublas_api().status_string(static_cast<cublasStatus_t>(status)), " (status ", status, ")"));
}

}  // namespace pstrain::compute::cuda
