#pragma once
// Which exchange::GradientExchange a trainer steps with: the local one on a job of one rank, else the one its mode
// builds (modes/builders.h), from the inputs this job gathers for it; see docs/internals.md.
#include <mpi.h>

#include <memory>

#include "compute/backend.h"
#include "exchange/gradient_exchange.h"
#include "job/overlap_plan.h"
#include "nn/model.h"
#include "ps/control_client.h"
#include "ps/data_client.h"
#include "ps/table_client.h"
#include "run_common/job_context.h"
#include "run_common/run_state.h"

namespace pstrain::job {

// What the modes are built from.
struct ExchangeParts {
  compute::Backend& backend;
  nn::Model& model;
  MPI_Comm trainers;                      // all trainers (MPI_COMM_SELF when training locally)
  ps::DataClient* client = nullptr;       // the parameter-server modes' data plane (null without servers)
  const run_common::RunState& run;        // starting parameters and the checkpoint resumed from (whole-model modes)
  ps::TableClient* tables = nullptr;      // the row tables the servers hold by rows (null: none)
  OverlapPlan overlap{};                  // parameter-server modes: what travels behind the computation
  const ps::ShardPlan* blocks = nullptr;  // streamed sync: the trainer's flat vector dealt to the shards
  MPI_Comm channel = MPI_COMM_NULL;       // streamed sync: the world's duplicate for the step's messages
  ps::ControlClient* control = nullptr;   // the parameter-server modes' control plane (null without servers)
};

// Local training when the job has one rank; otherwise the exchange of job.config.mode. Collective over the
// trainers where the mode sets up a communicator (all-reduce with NCCL, node aggregation's push groups).
std::unique_ptr<exchange::GradientExchange> make_exchange(const run_common::JobContext& job,
                                                          const ExchangeParts& parts);

// --optimizer over the whole model (local, all-reduce and geo trainers), with its decay mask, fresh.
std::unique_ptr<optim::Optimizer> whole_model_optimizer(const run_common::JobContext& job);

}  // namespace pstrain::job
