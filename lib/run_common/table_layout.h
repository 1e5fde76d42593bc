#pragma once
// Which parameters of the job's model the servers hold row by row (--table-exchange, ps/table_plan.h): the row
// tables (embedding tables) of a run with servers (sync, async, ssp), unless --table-exchange dense. Elsewhere
// tables are parameters like any other: all-reduce averages their gradient densely among the trainers (there
// are no servers to hold rows; an all-gather of the touched rows would be the sparse alternative), local
// training has nothing to ship.
#include <cstdint>
#include <vector>

#include "ps/model_tables.h"
#include "ps/table_client.h"
#include "ps/table_plan.h"
#include "run_common/job_context.h"

namespace pstrain::run_common {

// All-reduce's limit on the model's row tables (embedding tables) together: 2^26 floats, 256 MiB, which every
// trainer holds and all-reduces whole every step (a step's all-reduce of 256 MiB takes ~0.1 s at 25 Gbit/s).
inline constexpr std::uint64_t kLargestReplicatedTableFloats = std::uint64_t{1} << 26;

// Empty when no table goes by rows. Throws Error(kUsage) when a table must go by rows (--table-exchange sparse)
// but reads ids computed by another layer: only ids read straight from the data can be fetched before the
// forward pass; and in all-reduce when the tables pass kLargestReplicatedTableFloats.
ps::TablePlan plan_row_tables(const JobContext& job);

// The servers' dense blocks of the job's model (ps::ShardPlan over the model's layout, the row tables in none).
ps::ShardPlan server_blocks(const JobContext& job);

// Where a trainer keeps each row table's rows of one batch: after the dense parameters (job.dense_count), one
// cache per table, in TablePlan order, of the most distinct ids a batch of `max_batch` samples can look up; --mode
// geo: of every batch between two meetings (--geo-steps batches), whose rows a trainer holds until it meets.
std::vector<ps::RowCache> row_caches(const JobContext& job, std::size_t max_batch);

// The model a trainer builds: job.model with each row table cut to its cache (row_caches), the other parameters
// first, packed as in the dense layout, then the caches. The trainer's flat vector thus starts with exactly what
// the servers' dense blocks cut, and never holds a table. Without row tables, job.model itself.
nn::ModelPlan trainer_model_plan(const JobContext& job, std::size_t max_batch);

}  // namespace pstrain::run_common
