#pragma once
// --mode allreduce: no parameter servers. Every trainer holds the whole model and its own optimizer; after each
// backward pass the trainers average their gradients with one all-reduce (NCCL on GPUs, MPI_Allreduce on CPUs),
// then each applies the same update to the same parameters, so every trainer keeps bit-identical parameters,
// which a checksum comparison verifies at the end of every pass (and every --check-replicas-every-steps).
#include <mpi.h>

#include <memory>
#include <span>

#include "allreduce/summation.h"
#include "compute/backend.h"
#include "exchange/gradient_exchange.h"
#include "optim/optimizer.h"

namespace pstrain::allreduce {

struct AllreduceSetup {
  MPI_Comm trainers = MPI_COMM_NULL;
  compute::Backend* backend = nullptr;
  float* backend_gradient = nullptr;     // the model's flat gradient in backend memory
  std::size_t length = 0;                // parameter count
  std::int64_t check_every_steps = 0;    // also compare replicas every N steps (0: at the end of passes only)
  std::size_t stream_bucket_floats = 0;  // > 0: all-reduce buckets of this size behind the backward pass, where the
                                         // model can stream and the sum is MPI's on host memory (bucket_stream.h)
};

std::unique_ptr<exchange::GradientExchange> make_allreduce_exchange(std::unique_ptr<optim::Optimizer> optimizer,
                                                                    std::span<const float> initial,
                                                                    std::unique_ptr<Summation> summation,
                                                                    const AllreduceSetup& setup);

// Collective over `trainers`: true when every trainer's `parameters` have the same CRC-32.
bool replicas_agree(std::span<const float> parameters, MPI_Comm trainers);

}  // namespace pstrain::allreduce
