#pragma once
// The trainer's side of training: passes of steps over its own samples, the exchange of gradients for
// parameters after every step, and at the end of each pass the agreed statistics, evaluation on test.h5, the
// pass folder and the metrics line (the lead trainer). Who waits for whom: exchange/step_protocol.h.
#include <mpi.h>

#include <optional>

#include "compute/backend.h"
#include "data/shard.h"
#include "exchange/gradient_exchange.h"
#include "nn/model.h"
#include "run_common/job_context.h"
#include "run_common/run_schedule.h"
#include "run_common/trainer_samples.h"
#include "trainer/batch_dispatch.h"
#include "trainer/pass_report.h"
#include "trainer/trainer_checkpoints.h"

namespace pstrain::trainer {

// `trainers` is the communicator of all trainers (MPI_COMM_SELF when training locally). `held_out` is set on
// the lead trainer only. Returns true when training completed, false when it stopped after a checkpoint on a
// signal. Throws pstrain::Error(kDiverged) on a NaN or Inf loss.
bool run_trainer(const run_common::JobContext& job, compute::Backend& backend, nn::Model& model,
                 exchange::GradientExchange& exchange, MPI_Comm trainers, run_common::TrainerSamples& samples,
                 const HeldOutData& held_out, const run_common::RunSchedule& schedule,
                 const CheckpointSupport& checkpoints, const DataDispatch& dispatch = {});

}  // namespace pstrain::trainer
