#pragma once
// The trainer's side of training: passes of steps over its own samples, the exchange of gradients for
// parameters after every step, and at the end of each pass the agreed statistics, evaluation on test.h5, the
// pass folder and the metrics line (the lead trainer).
#include <mpi.h>

#include <functional>
#include <optional>

#include "data/shard.h"
#include "compute/backend.h"
#include "nn/model.h"
#include "ps/exchange.h"
#include "ps/shard_plan.h"
#include "train/checkpointing.h"
#include "train/job_context.h"
#include "train/progress.h"

namespace pstrain::train {

// Checkpointing for this run: none (async mode) or a writer and the plan that splits the model state among the
// ranks holding it (the server shards, or one shard: the local trainer).
struct CheckpointSupport {
  CheckpointWriter* writer = nullptr;
  const ps::ShardPlan* plan = nullptr;
  bool asynchronous = false;  // async/ssp: checkpoints by request and quiesce (windows.h), not at common steps
};

// Dynamic data dispatch: where the next chunk ticket comes from (null: static shards) and how to rewind it.
struct DataDispatch {
  std::function<std::int64_t()> take_chunk;
  std::function<void()> reset;
};

// `trainers` is the communicator of all trainers (MPI_COMM_SELF when training locally). `test` is set on the
// lead trainer only. Returns true when training completed, false when it stopped after a checkpoint on a
// signal. Throws pstrain::Error(kDiverged) on a NaN or Inf loss.
bool run_trainer(const JobContext& job, compute::Backend& backend, nn::Model& model, ps::ParameterExchange& exchange, MPI_Comm trainers,
                 const data::Samples& samples, const std::optional<data::Samples>& test, const Progress& progress,
                 const CheckpointSupport& checkpoints, const DataDispatch& dispatch = {});

}  // namespace pstrain::train
