// GPU discovery in a build without CUDA (CMake found no nvcc): there are no GPUs to offer.
#include "compute/backend.h"
#include "core/error.h"

namespace pstrain::compute {

int gpu_count() {
  return 0;
}

bool built_with_cuda() {
  return false;
}

std::unique_ptr<Backend> make_gpu_backend(int ordinal, GpuConvolutions /*convolutions*/) {
  throw Error(ExitCode::kUsage,
              cat("GPU ", ordinal,
                  " requested, but this pstrain was built without CUDA "
                  "(CMake found no CUDA toolkit); rebuild on a machine with nvcc or use --device cpu"));
}

}  // namespace pstrain::compute
