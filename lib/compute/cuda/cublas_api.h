#pragma once
// The cuBLAS functions the CUDA backend calls, taken from libcublas.so.<major of the headers built against> when
// the first GPU backend is made (core/shared_library.h says why it is not linked). Servers and CPU trainers never
// load it.
#include <cublas_v2.h>

namespace pstrain::compute::cuda {

struct CublasApi {
  decltype(&cublasCreate_v2) create;
  decltype(&cublasDestroy_v2) destroy;
  decltype(&cublasSetStream_v2) set_stream;
  decltype(&cublasSetMathMode) set_math_mode;
  decltype(&cublasSetPointerMode_v2) set_pointer_mode;
  decltype(&cublasSgemm_v2) sgemm;
  decltype(&cublasGetStatusString) status_string;
};

// Loads the library on the first call (once per process, thread-safe) and keeps it to the end of the process.
// Throws Error(kMissingDependency) naming the library and what to do when it cannot be loaded.
const CublasApi& cublas_api();

}  // namespace pstrain::compute::cuda
