// A build without NCCL (CMake found none): GPU trainers cannot all-reduce.
#include "allreduce/summation.h"
#include "core/error.h"

namespace pstrain::allreduce {

bool built_with_nccl() {
  return false;
}

std::unique_ptr<Summation> make_nccl_summation(MPI_Comm, compute::Backend& backend) {
  throw Error(ExitCode::kUsage, cat("--mode allreduce on the ", backend.name(),
                                    " backend needs NCCL, and this pstrain was built without it; use --device cpu or a "
                                    "parameter-server mode"));
}

}  // namespace pstrain::allreduce
