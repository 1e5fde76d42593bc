#pragma once
// A parameter-server shard's part in the job: initialise (or resume) its slice, then serve the trainers, sync
// step by step or async until they are done, joining every checkpoint. The protocol is in
// exchange/step_protocol.h.
#include <vector>

#include "nn/model.h"
#include "ps/sync_transport.h"
#include "ps/table_plan.h"
#include "ps/windows.h"
#include "run_common/job_context.h"
#include "run_common/run_state.h"

namespace pstrain::server {

// Returns true when training completed, false when it stopped after a checkpoint on a signal. `partition` says
// which dense blocks and which table rows this shard holds (`table_windows`: the partition's tables).
// `parameters` is the model's layout, which the optimizer's weight-decay mask is built from (run_common/decay_mask.h).
bool run_server(const run_common::JobContext& job, ps::PsWindows& windows, ps::TableWindows& table_windows,
                ps::SyncTransport transport, MPI_Comm channel, const ps::ModelPartition& partition,
                run_common::RunState& run, const std::vector<nn::ParameterInfo>& parameters);

}  // namespace pstrain::server
