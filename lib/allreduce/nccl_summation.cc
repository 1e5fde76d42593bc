// NCCL all-reduce of GPU memory. The communicator is built once per job: trainer 0 creates the unique id, MPI
// broadcasts it, every trainer joins (ncclCommInitRank is collective and must follow cudaSetDevice, which the
// GPU backend did when it was made).
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <limits>

#include "allreduce/summation.h"
#include "comm/mpi_check.h"
#include "core/error.h"

namespace pstrain::allreduce {

namespace {

void check_nccl(ncclResult_t result, const char* call) {
  if (result != ncclSuccess) {
    throw Error(ExitCode::kInternal, cat(call, " failed: ", ncclGetErrorString(result)));
  }
}

void check_cuda(cudaError_t result, const char* call) {
  if (result != cudaSuccess) throw Error(ExitCode::kInternal, cat(call, " failed: ", cudaGetErrorString(result)));
}

class NcclSummation final : public Summation {
 public:
  NcclSummation(MPI_Comm trainers, compute::Backend& backend)
      : stream_(static_cast<cudaStream_t>(backend.native_stream())) {
    PSTRAIN_ASSERT(stream_ != nullptr, "the ", backend.name(), " backend has no CUDA stream for NCCL");
    int rank = 0;
    int size = 0;
    MPI_CHECK(MPI_Comm_rank(trainers, &rank));
    MPI_CHECK(MPI_Comm_size(trainers, &size));
    ncclUniqueId id{};
    if (rank == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
    MPI_CHECK(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, trainers));
    check_nccl(ncclCommInitRank(&comm_, size, id, rank), "ncclCommInitRank");
  }
  ~NcclSummation() override {
    if (comm_ != nullptr) ncclCommDestroy(comm_);  // errors at teardown are not actionable
  }
  NcclSummation(const NcclSummation&) = delete;
  NcclSummation& operator=(const NcclSummation&) = delete;

  std::string name() const override { return "NCCL"; }

  void sum(float* data, std::size_t length) override {
    check_nccl(ncclAllReduce(data, data, length, ncclFloat, ncclSum, comm_, stream_), "ncclAllReduce");
    // The caller copies the result to the host next, on the same stream; waiting here keeps the all-reduce
    // time where it belongs in the step-time breakdown.
    check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize after ncclAllReduce");
  }

 private:
  cudaStream_t stream_;
  ncclComm_t comm_ = nullptr;
};

}  // namespace

bool built_with_nccl() { return true; }

std::unique_ptr<Summation> make_nccl_summation(MPI_Comm trainers, compute::Backend& backend) {
  return std::make_unique<NcclSummation>(trainers, backend);
}

}  // namespace pstrain::allreduce
