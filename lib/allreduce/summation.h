#pragma once
// Summing a float vector over all trainers, in place, where the model keeps it: NCCL in GPU memory, MPI in host
// memory. Every trainer ends with the same bits (both NCCL's ring/tree and Open MPI's algorithms reduce each
// element once and broadcast the result; the per-pass replica check verifies it).
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
  // data: `length` floats of backend memory; on return it holds the element-wise sum over the trainers.
  virtual void sum(float* data, std::size_t length) = 0;
};

// MPI_Allreduce in place: for backends whose memory is host memory (the CPU backend).
std::unique_ptr<Summation> make_mpi_summation(MPI_Comm trainers);

// NCCL over the trainers (one communicator, built from an id broadcast over `trainers`), on the backend's stream.
// Throws pstrain::Error(kUsage) when this build has no NCCL.
std::unique_ptr<Summation> make_nccl_summation(MPI_Comm trainers, compute::Backend& backend);
bool built_with_nccl();

// The right one for `backend`: MPI where its memory is host memory, NCCL otherwise.
std::unique_ptr<Summation> make_summation(MPI_Comm trainers, compute::Backend& backend);

}  // namespace pstrain::allreduce
