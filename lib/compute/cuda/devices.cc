// GPU discovery in a build with CUDA.
#include <cuda_runtime_api.h>

#include "compute/backend.h"
#include "compute/cuda/cuda_backend.h"
#include "compute/cuda/cuda_check.h"
#include "core/error.h"

namespace pstrain::compute {

namespace {

// cudaGetDeviceCount fails (no driver, driver too old, no device, CUDA_VISIBLE_DEVICES empty) rather than
// returning 0 on machines without a usable GPU; that is "no GPU" here, never an error.
int count_devices(cudaError_t* failure) noexcept {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (failure != nullptr) *failure = status;
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

}  // namespace

int gpu_count() {
  return count_devices(nullptr);
}

bool built_with_cuda() {
  return true;
}

std::unique_ptr<Backend> make_gpu_backend(int ordinal, GpuConvolutions convolutions) {
  cudaError_t failure = cudaSuccess;
  const int count = count_devices(&failure);
  if (count == 0) {
    throw Error(ExitCode::kUsage,
                cat("GPU ", ordinal, " requested, but this process sees no CUDA device (",
                    failure == cudaSuccess ? "no devices" : cudaGetErrorString(failure),
                    "); check the driver (nvidia-smi) and CUDA_VISIBLE_DEVICES, or use --device cpu"));
  }
  if (ordinal < 0 || ordinal >= count) {
    throw Error(ExitCode::kUsage,
                cat("GPU ", ordinal, " requested, but this process sees ", count, " GPU", count == 1 ? "" : "s",
                    " (ordinals 0..", count - 1, "); check CUDA_VISIBLE_DEVICES and the number of trainers per node"));
  }
  CUDA_CHECK(cudaSetDevice(ordinal));
  return std::make_unique<cuda::CudaBackend>(ordinal, convolutions);
}

}  // namespace pstrain::compute
