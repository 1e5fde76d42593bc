#pragma once
// NCCL_CHECK for code that links pstrain_nccl (lib/allreduce): a failed NCCL call becomes
// pstrain::Error(kInternal) naming the call, file:line, NCCL's error string and its last detailed message.
// ncclInProgress counts as a failure: only communicators created non-blocking return it, and pstrain makes none.
#include <nccl.h>

#include "core/error.h"

namespace pstrain::compute::cuda {

[[noreturn]] inline void throw_nccl_error(ncclResult_t status, const char* call, const char* file, int line) {
  std::string message = cat("NCCL call ", call, " failed at ", file, ":", line, ": ", ncclGetErrorString(status));
#if defined(NCCL_VERSION_CODE) && NCCL_VERSION_CODE >= 21300
  const char* detail = ncclGetLastError(nullptr);
  if (detail != nullptr && detail[0] != '\0') message += cat(" (", detail, ")");
#endif
  throw Error(ExitCode::kInternal, message);
}

}  // namespace pstrain::compute::cuda

#define NCCL_CHECK(call)                                                                           \
  do {                                                                                             \
    const ncclResult_t pstrain_nccl_status_ = (call);                                              \
    if (pstrain_nccl_status_ != ncclSuccess) {                                                     \
      ::pstrain::compute::cuda::throw_nccl_error(pstrain_nccl_status_, #call, __FILE__, __LINE__); \
    }                                                                                              \
  } while (0)
