#pragma once
// What a server shard starts from, computed without ever holding the whole model (its row tables may be larger
// than any rank): its dense blocks of the starting parameters (the seed's initialisation, or --init-from's pass
// folder) and its rows of each row table, written in place into the table's window. The values are those of the
// whole model's initialisation (nn::initial_parameters), drawn a block at a time.
#include <memory>
#include <vector>

#include "ps/table_plan.h"
#include "ps/table_shard.h"
#include "run_common/job_context.h"

namespace pstrain::server {

// Before training, where failures are agreed: --init-from's pass folder checked against the model (the dense
// parameters read, the tables' shapes looked at), so that fill_server_start cannot fail on it. Throws
// Error(kInputData) naming the folder and the mismatch.
void check_server_start(const run_common::JobContext& job);

// Sets each row table's rows (`tables`, job.tables order) and returns this shard's dense blocks, its slice in
// `partition`'s local order.
std::vector<float> fill_server_start(const run_common::JobContext& job, const ps::ModelPartition& partition,
                                     const std::vector<std::unique_ptr<ps::TableShard>>& tables);

}  // namespace pstrain::server
