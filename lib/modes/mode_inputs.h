#pragma once
// What a mode's exchange is built from. Whoever starts the trainers fills it (pstrain's job, job/exchange_factory.cc;
// the dry-run, simulation/dryrun_ranks.cc) from its own configuration, and the mode's builder (builders.cc) reads
// only what its mode needs; nothing here knows a run's configuration, so both programs build every mode the same.
#include <mpi.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "comm/layout.h"
#include "compute/backend.h"
#include "exchange/meeting_cadence.h"
#include "optim/optimizer.h"
#include "ps/control_client.h"
#include "ps/data_client.h"
#include "ps/shard_plan.h"
#include "ps/sync_transport.h"
#include "ps/table_client.h"

namespace pstrain::modes {

// The whole-model modes' optimizer (local, all-reduce, geo): --optimizer over the whole model, with its decay mask.
using OptimizerMaker = std::function<std::unique_ptr<optim::Optimizer>()>;

struct ModeInputs {
  comm::WorldLayout layout;
  MPI_Comm trainers = MPI_COMM_NULL;  // all trainers (MPI_COMM_SELF when training locally)

  // The parameter-server modes: the clients of the servers' windows (null without servers).
  ps::DataClient* data = nullptr;
  ps::ControlClient* control = nullptr;
  ps::TableClient* tables = nullptr;      // the row tables the servers hold by rows (null: none)
  const ps::ShardPlan* blocks = nullptr;  // streamed sync: the trainer's flat vector dealt to the shards
  MPI_Comm channel = MPI_COMM_NULL;       // streamed sync: the world's duplicate for the step's messages
  // What travels behind the computation (job/overlap_plan.h).
  ps::SyncTransport sync = ps::SyncTransport::kOneSided;
  bool stream_pushes = false;
  std::size_t allreduce_bucket_floats = 0;
  std::chrono::microseconds poll_interval{0};  // async, ssp: between two looks at a shard's control words
  int staleness = 0;                           // ssp: how far a trainer may run ahead of the slowest
  exchange::MeetingCadence cadence;            // where the ranks meet (geo: every --geo-steps)

  // The whole-model modes: (local, all-reduce) the optimizer to continue with, its state restored where the run
  // resumes from the model's checkpoint, with the parameters to start from; (geo) this trainer's own optimizer, its
  // state restored from the trainers' states (checkpoint/trainer_states.h).
  OptimizerMaker restored_optimizer;
  OptimizerMaker trainer_optimizer;  // over the dense parameters
  // geo with row tables by rows: SGD over the caches of the rows a trainer holds between meetings.
  OptimizerMaker held_rows_optimizer;
  std::span<const float> initial;
  std::uint64_t steps_taken = 0;  // geo: the optimizer's step count at the run's start (its global step)

  // All-reduce: the model's gradient where the backend keeps it, and the replica checks.
  compute::Backend* backend = nullptr;
  float* backend_gradient = nullptr;
  std::size_t parameter_count = 0;
  std::int64_t check_replicas_every_steps = 0;
};

}  // namespace pstrain::modes
