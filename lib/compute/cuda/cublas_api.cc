#include "compute/cuda/cublas_api.h"

#include <string>

#include "core/shared_library.h"

namespace pstrain::compute::cuda {

namespace {

const SharedLibrary& cublas_library() {
  static const SharedLibrary
      library("libcublas.so." + std::to_string(CUBLAS_VER_MAJOR),
              "the GPU backend needs CUDA's cuBLAS " + std::to_string(CUBLAS_VER_MAJOR) +
                  " (install it, or add its folder to LD_LIBRARY_PATH), or train with --device cpu");
  return library;
}

CublasApi resolve() {
  const SharedLibrary& library = cublas_library();
  CublasApi api{};
  api.create = library.function<decltype(api.create)>("cublasCreate_v2");
  api.destroy = library.function<decltype(api.destroy)>("cublasDestroy_v2");
  api.set_stream = library.function<decltype(api.set_stream)>("cublasSetStream_v2");
  api.set_math_mode = library.function<decltype(api.set_math_mode)>("cublasSetMathMode");
  api.set_pointer_mode = library.function<decltype(api.set_pointer_mode)>("cublasSetPointerMode_v2");
  api.sgemm = library.function<decltype(api.sgemm)>("cublasSgemm_v2");
  api.status_string = library.function<decltype(api.status_string)>("cublasGetStatusString");
  return api;
}

}  // namespace

const CublasApi& cublas_api() {
  static const CublasApi api = resolve();
  return api;
}

}  // namespace pstrain::compute::cuda
