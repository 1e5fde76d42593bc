#pragma once
// What a server shard starts from, computed without ever holding the whole model (its row tables may be larger
// than any rank): its dense blocks of the starting parameters (the seed's initialisation, or --init-from's pass
// folder) and its rows of each row table. The values are those of the whole model's initialisation
// (nn::initial_parameters), drawn a block at a time.
#include <vector>

#include "train/job_context.h"

namespace pstrain::train {

struct ServerStart {
  std::vector<float> dense_slice;              // the shard's dense blocks, in its local order (ps::ShardPlan)
  std::vector<std::vector<float>> table_rows;  // per row table (job.tables order): the shard's rows, local order
};

// Throws Error(kInputData) naming the pass folder and the mismatch when --init-from does not fit the model.
ServerStart server_start(const JobContext& job);

}  // namespace pstrain::train
