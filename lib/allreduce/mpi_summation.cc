#include <limits>

#include "allreduce/summation.h"
#include "comm/mpi_check.h"
#include "core/error.h"

namespace pstrain::allreduce {

namespace {

class MpiSummation final : public Summation {
 public:
  explicit MpiSummation(MPI_Comm trainers) : trainers_(trainers) {}
  std::string name() const override { return "MPI_Allreduce"; }
  void sum(float* data, std::size_t length) override {
    PSTRAIN_ASSERT(length <= static_cast<std::size_t>(std::numeric_limits<int>::max()), "all-reduce of ", length,
                   " floats exceeds MPI's int count");
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(length), MPI_FLOAT, MPI_SUM, trainers_));
  }

 private:
  MPI_Comm trainers_;
};

// Device memory -> page-locked host buffer -> MPI_Allreduce -> back.
class StagedMpiSummation final : public Summation {
 public:
  StagedMpiSummation(MPI_Comm trainers, compute::Backend& backend, std::size_t length)
      : backend_(backend), host_(backend, length), mpi_(trainers) {}
  std::string name() const override { return "MPI_Allreduce through host memory"; }
  void sum(float* data, std::size_t length) override {
    const std::span<float> host = host_.span().first(length);
    backend_.copy_to_host(host.data(), data, host.size_bytes());
    mpi_.sum(host.data(), length);
    backend_.copy_from_host(data, host.data(), host.size_bytes());
    backend_.synchronize();  // the staging buffer is reused at the next step
  }

 private:
  compute::Backend& backend_;
  compute::StagingBuffer<float> host_;
  MpiSummation mpi_;
};

}  // namespace

std::unique_ptr<Summation> make_mpi_summation(MPI_Comm trainers) { return std::make_unique<MpiSummation>(trainers); }

std::unique_ptr<Summation> make_staged_mpi_summation(MPI_Comm trainers, compute::Backend& backend,
                                                     std::size_t length) {
  return std::make_unique<StagedMpiSummation>(trainers, backend, length);
}

std::unique_ptr<Summation> make_summation(MPI_Comm trainers, compute::Backend& backend, bool exclusive_gpu,
                                          std::size_t length) {
  int nccl_everywhere = !backend.host_accessible() && exclusive_gpu && built_with_nccl() ? 1 : 0;
  MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &nccl_everywhere, 1, MPI_INT, MPI_LAND, trainers));
  if (nccl_everywhere) return make_nccl_summation(trainers, backend);
  if (backend.host_accessible()) return make_mpi_summation(trainers);
  return make_staged_mpi_summation(trainers, backend, length);
}

}  // namespace pstrain::allreduce
