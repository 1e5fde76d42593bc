#pragma once
// --num-pservers -1: the sizing rule (job/server_count.h, docs/sizing.md) fed with this job's model and the
// machine rates measured for it. The model is planned against the data's metadata here, ahead of the job's own
// planning (phase 2 of job/job_start.cc), because the layout must be known before the data is dealt to the
// trainers.
#include <vector>

#include "config/train_config.h"
#include "job/server_count.h"

namespace pstrain::job {

// The rates the rule assumes (docs/sizing.md, "The machine's rates"). Measured 2026-11-25 on the development
// machine (one core of it, one BLAS thread): a trainer's forward and backward, and a shard's sum and updates in
// the dry-run (benchmarks/scale), where SimGrid times the real ShardServer code.
inline constexpr double kCpuTrainerFlopsPerSecond = 1.3e11;  // the MLP's step: 90 MFLOP in 0.65-0.71 ms
inline constexpr double kGpuTrainerFlopsPerSecond = 2e13;    // assumed for one data-centre GPU, not measured
inline constexpr double kNodeLinkBytesPerSecond = 12.5e9;    // assumed: 100 Gb/s per node, each way
inline constexpr double kSyncSumBytesPerSecond = 12e9;       // slot bytes summed (and the sum's SGD/Adam update)
inline constexpr double kAsyncSgdBytesPerSecond = 8e9;       // pushed bytes applied by sgd or momentum
inline constexpr double kAsyncAdamBytesPerSecond = 4e9;      // pushed bytes applied by adam or adagrad

// The rule's inputs for `config` on the ranks that `node_of_rank` places (a node number per rank); the model is
// planned only where the rule needs it (several nodes). Throws what planning the model throws (a missing data
// folder, a bad --model-file).
ServerCountInputs server_count_inputs(const config::TrainConfig& config, const std::vector<int>& node_of_rank);

// The default count for a mode with servers: the rule's, or half the ranks (at least 1) where the model cannot
// be planned here (the job's own planning then reports why, on every rank).
ServerCount default_server_count(const config::TrainConfig& config, const std::vector<int>& node_of_rank);

}  // namespace pstrain::job
