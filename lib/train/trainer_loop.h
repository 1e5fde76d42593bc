#pragma once
// The trainer's side of training: passes of steps over its own samples, the exchange of gradients for
// parameters after every step, and at the end of each pass the agreed statistics, evaluation on test.h5, the
// pass folder and the metrics line (the lead trainer).
#include <mpi.h>

#include <optional>

#include "data/shard.h"
#include "nn/model.h"
#include "ps/exchange.h"
#include "train/job_context.h"

namespace pstrain::train {

// `trainers` is the communicator of all trainers (MPI_COMM_SELF when training locally). `test` is set on the
// lead trainer only. Throws pstrain::Error(kDiverged) on a NaN or Inf loss.
void run_trainer(const JobContext& job, nn::Model& model, ps::ParameterExchange& exchange, MPI_Comm trainers,
                 const data::Samples& samples, const std::optional<data::Samples>& test);

}  // namespace pstrain::train
