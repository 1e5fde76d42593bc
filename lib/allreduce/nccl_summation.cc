// NCCL all-reduce of GPU memory. The communicator is built once per job: trainer 0 creates the unique id, MPI
// broadcasts it, every trainer joins (ncclCommInitRank is collective and must follow cudaSetDevice, which the
// GPU backend did when it was made).
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <limits>

#include "allreduce/summation.h"
#include "comm/mpi_check.h"
#include "compute/cuda/cuda_check.h"
#include "compute/cuda/nccl_check.h"
#include "core/error.h"

namespace pstrain::allreduce {

namespace {

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
    if (rank == 0) NCCL_CHECK(ncclGetUniqueId(&id));
    MPI_CHECK(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, trainers));
    // ncclCommInitRank binds the communicator to the CURRENT device of the calling thread. The CUDA backend may
    // be used from a thread other than the one that made it (it sets its device on every call), so make its
    // device current here too: synchronize() does that (and only drains the stream). Later NCCL calls switch
    // to the communicator's own device by themselves.
    backend.synchronize();
    NCCL_CHECK(ncclCommInitRank(&comm_, size, id, rank));
  }
  ~NcclSummation() override {
    if (comm_ != nullptr) ncclCommDestroy(comm_);  // errors at teardown are not actionable
  }
  NcclSummation(const NcclSummation&) = delete;
  NcclSummation& operator=(const NcclSummation&) = delete;

  std::string name() const override { return "NCCL"; }
  bool sums_device_memory() const override { return true; }

  void sum(float* data, std::size_t length) override {
    NCCL_CHECK(ncclAllReduce(data, data, length, ncclFloat, ncclSum, comm_, stream_));
    // The caller copies the result to the host next, on the same stream; waiting here keeps the all-reduce
    // time where it belongs in the step-time breakdown.
    CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

 private:
  cudaStream_t stream_;
  ncclComm_t comm_ = nullptr;
};

}  // namespace

bool built_with_nccl() {
  return true;
}

std::unique_ptr<Summation> make_nccl_summation(MPI_Comm trainers, compute::Backend& backend) {
  return std::make_unique<NcclSummation>(trainers, backend);
}

}  // namespace pstrain::allreduce
