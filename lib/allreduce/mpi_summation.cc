#include <limits>

#include "allreduce/summation.h"
#include "comm/mpi_check.h"
#include "core/error.h"

namespace pstrain::allreduce {

namespace {

class MpiSummation final : public Summation {
 public:
  explicit MpiSummation(MPI_Comm trainers) : trainers_(trainers) {}
  std::string name() const override { return "MPI_Allreduce (host memory)"; }
  bool sums_device_memory() const override { return false; }
  void sum(float* data, std::size_t length) override {
    PSTRAIN_ASSERT(length <= static_cast<std::size_t>(std::numeric_limits<int>::max()), "all-reduce of ", length,
                   " floats exceeds MPI's int count");
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(length), MPI_FLOAT, MPI_SUM, trainers_));
  }

 private:
  MPI_Comm trainers_;
};

}  // namespace

std::unique_ptr<Summation> make_mpi_summation(MPI_Comm trainers) {
  return std::make_unique<MpiSummation>(trainers);
}

std::unique_ptr<Summation> make_summation(MPI_Comm trainers, compute::Backend& backend, bool exclusive_gpu) {
  int nccl_everywhere = !backend.host_accessible() && exclusive_gpu && built_with_nccl() ? 1 : 0;
  MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &nccl_everywhere, 1, MPI_INT, MPI_LAND, trainers));
  if (nccl_everywhere) return make_nccl_summation(trainers, backend);
  return make_mpi_summation(trainers);
}

}  // namespace pstrain::allreduce
