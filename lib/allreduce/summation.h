#pragma once
// Summing a float vector over all trainers, in place: NCCL in GPU memory, MPI in host memory. Every trainer ends
// with the same bits (both NCCL's ring/tree and Open MPI's algorithms reduce each element once and broadcast the
// result; the per-pass replica check verifies it).
#include <mpi.h>

#include <cstddef>
#include <memory>
#include <string>

#include "compute/backend.h"

namespace pstrain::allreduce {

class Summation {
 public:
  virtual ~Summation() = default;
  virtual std::string name() const = 0;
  // True when sum() takes the backend's device memory (NCCL); false when it takes host memory (MPI).
  virtual bool sums_device_memory() const = 0;
  // data: `length` floats; on return it holds the element-wise sum over the trainers.
  virtual void sum(float* data, std::size_t length) = 0;
};

// MPI_Allreduce in place, on host memory.
std::unique_ptr<Summation> make_mpi_summation(MPI_Comm trainers);

// NCCL over the trainers (one communicator, built from an id broadcast over `trainers`), on the backend's stream.
// Throws pstrain::Error(kUsage) when this build has no NCCL.
std::unique_ptr<Summation> make_nccl_summation(MPI_Comm trainers, compute::Backend& backend);
bool built_with_nccl();

// Collective over `trainers`: NCCL when every trainer has a GPU of its own (`exclusive_gpu`) and the build has
// NCCL, else MPI. All trainers take part in the same kind of collective, so a mixed job (two trainers sharing a
// GPU, which NCCL refuses, or CPU and GPU trainers under --device auto) never waits in NCCL for a rank that went
// to MPI.
std::unique_ptr<Summation> make_summation(MPI_Comm trainers, compute::Backend& backend, bool exclusive_gpu);

}  // namespace pstrain::allreduce
