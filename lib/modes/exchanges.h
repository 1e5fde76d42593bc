#pragma once
// The modes' exchanges, one file each in this folder, as their builders (builders.cc) make them: the
// parameter-server modes over the servers' data and control clients (lib/ps), all-reduce over a summation
// (lib/allreduce), local training over nothing. Who waits for whom in each: exchange/step_protocol.h.
#include <mpi.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "allreduce/summation.h"
#include "comm/communicator.h"
#include "compute/backend.h"
#include "exchange/gradient_exchange.h"
#include "exchange/meeting_cadence.h"
#include "optim/optimizer.h"
#include "ps/control_client.h"
#include "ps/data_client.h"
#include "ps/shard_plan.h"
#include "ps/table_client.h"

namespace pstrain::modes {

// `tables` (the parameter-server modes): the row tables the servers hold by rows (null: none); their rows are
// fetched per batch.
// Sync over SyncTransport::kOneSided (sync_one_sided.cc).
std::unique_ptr<exchange::GradientExchange> make_sync_exchange(ps::DataClient& client, ps::TableClient* tables);
// Sync over SyncTransport::kOneSided with node aggregation (sync_node_groups.cc; exchange/step_protocol.h "Node
// aggregation"): `group` holds this trainer's push group (comm/push_groups.h), ranked in trainer order, so that its
// rank 0 is the group's leader, the one that pushes and pulls the dense part for the group; the rows of `tables`
// go per trainer.
std::unique_ptr<exchange::GradientExchange> make_node_sync_exchange(ps::DataClient& client, ps::ControlClient& control,
                                                                    comm::Communicator group, ps::TableClient* tables);
// Sync over SyncTransport::kStreamed (sync_streamed.cc): `blocks` deals the trainer's flat vector to the shards;
// `channel` is the world's duplicate that carries the step's messages (ps/block_messages.h), the same communicator
// the servers were given.
std::unique_ptr<exchange::GradientExchange> make_streamed_sync_exchange(ps::DataClient& client,
                                                                        const ps::ShardPlan& blocks, MPI_Comm channel,
                                                                        ps::TableClient* tables);
// Async (async.cc): `trainers` is the communicator of all trainers (for the end-of-pass agreement);
// `poll_interval` is the pause between two looks at a shard's control words while waiting for an update to be
// applied; `stream_pushes`: put the gradient block by block during the backward pass (ps/push_stream.h).
std::unique_ptr<exchange::GradientExchange> make_async_exchange(ps::DataClient& client, ps::ControlClient& control,
                                                                MPI_Comm trainers,
                                                                std::chrono::microseconds poll_interval,
                                                                bool stream_pushes, ps::TableClient* tables);
// Async with bounded staleness (ssp.cc): a trainer never starts a step more than `staleness` steps ahead of the
// slowest.
std::unique_ptr<exchange::GradientExchange> make_ssp_exchange(ps::DataClient& client, ps::ControlClient& control,
                                                              MPI_Comm trainers,
                                                              std::chrono::microseconds poll_interval, int staleness,
                                                              bool stream_pushes, ps::TableClient* tables);
// GEO-SGD (geo.cc), whose trainers step alone between meetings (TrainConfig::steps_alone): `optimizer` (over the
// dense parameters, its step count at the run's global step) updates this trainer's own copy at every step, and
// `held_rows` (SGD, null without row tables) the table rows it holds between meetings; `meetings` (a sync exchange,
// either transport, with `tables`, the row tables the servers hold by rows, or null) meets the servers where
// `cadence` says.
struct StepsAloneParts {
  std::unique_ptr<exchange::GradientExchange> meetings;
  std::unique_ptr<optim::Optimizer> optimizer;
  std::unique_ptr<optim::Optimizer> held_rows;
  ps::TableClient* tables = nullptr;
  exchange::MeetingCadence cadence;
};
std::unique_ptr<exchange::GradientExchange> make_geo_exchange(StepsAloneParts parts);

// All-reduce (allreduce.cc): no parameter servers. Every trainer holds the whole model and its own optimizer; after
// each backward pass the trainers average their gradients with one all-reduce (NCCL on GPUs, MPI_Allreduce on
// CPUs), then each applies the same update to the same parameters, so every trainer keeps bit-identical
// parameters, which a checksum comparison verifies at the end of every pass (and every
// --check-replicas-every-steps).
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
                                                                    std::unique_ptr<allreduce::Summation> summation,
                                                                    const AllreduceSetup& setup);

// Local training (local.cc; one rank): no exchange at all, the trainer runs the optimizer on its own parameters.
// `initial` (here and in make_allreduce_exchange) is read by start() and must live until then: the job's starting
// or resumed parameters, which it keeps (not copied again: a click model's tables are gigabytes).
std::unique_ptr<exchange::GradientExchange> make_local_exchange(std::unique_ptr<optim::Optimizer> optimizer,
                                                                std::span<const float> initial);

}  // namespace pstrain::modes
