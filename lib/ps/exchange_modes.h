#pragma once
// The parameter-server exchange modes (exchange::GradientExchange over the data and control clients): sync, async, ssp and geo, one
// file each. The protocol they follow with the servers is in exchange/step_protocol.h.
#include <mpi.h>

#include <chrono>
#include <memory>

#include "comm/communicator.h"
#include "exchange/gradient_exchange.h"
#include "exchange/meeting_cadence.h"
#include "ps/control_client.h"
#include "ps/data_client.h"
#include "ps/table_client.h"

namespace pstrain::ps {

// `tables` (every mode): the row tables the servers hold by rows (null: none); their rows are fetched per batch.
// Sync over SyncTransport::kOneSided.
std::unique_ptr<exchange::GradientExchange> make_sync_exchange(DataClient& client, TableClient* tables = nullptr);
// Sync over SyncTransport::kOneSided with node aggregation (node_sync_exchange.cc; exchange/step_protocol.h "Node
// aggregation"): `group` holds this trainer's push group (comm/push_groups.h), ranked in trainer order, so that its
// rank 0 is the group's leader, the one that pushes and pulls the dense part for the group; the rows of `tables`
// go per trainer.
std::unique_ptr<exchange::GradientExchange> make_node_sync_exchange(DataClient& client, ControlClient& control,
                                                                    comm::Communicator group,
                                                                    TableClient* tables = nullptr);
// Sync over SyncTransport::kStreamed: `blocks` deals the trainer's flat vector to the shards; `channel` is the
// world's duplicate that carries the step's messages (block_messages.h), the same communicator the servers were
// given.
std::unique_ptr<exchange::GradientExchange> make_streamed_sync_exchange(DataClient& client, const ShardPlan& blocks,
                                                                        MPI_Comm channel,
                                                                        TableClient* tables = nullptr);
// `trainers` is the communicator of all trainers (for the end-of-pass agreement); `poll_interval` is the pause
// between two looks at a shard's control words while waiting for an update to be applied; `stream_pushes`: put
// the gradient block by block during the backward pass (ps/push_stream.h).
std::unique_ptr<exchange::GradientExchange> make_async_exchange(DataClient& client, ControlClient& control,
                                                                MPI_Comm trainers,
                                                                std::chrono::microseconds poll_interval,
                                                                bool stream_pushes, TableClient* tables = nullptr);
// Async with bounded staleness: a trainer never starts a step more than `staleness` steps ahead of the slowest.
std::unique_ptr<exchange::GradientExchange> make_ssp_exchange(DataClient& client, ControlClient& control,
                                                              MPI_Comm trainers,
                                                              std::chrono::microseconds poll_interval, int staleness,
                                                              bool stream_pushes, TableClient* tables = nullptr);

// GEO-SGD (geo_exchange.cc): `optimizer` (plain SGD over the whole model, its step count at the run's global
// step) updates this trainer's own copy at every step; `meetings` (a sync exchange, either transport, without row
// tables) meets the servers where `cadence` says.
std::unique_ptr<exchange::GradientExchange> make_geo_exchange(std::unique_ptr<exchange::GradientExchange> meetings,
                                                              std::unique_ptr<optim::Optimizer> optimizer,
                                                              exchange::MeetingCadence cadence);

}  // namespace pstrain::ps
