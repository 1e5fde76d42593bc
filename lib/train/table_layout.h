#pragma once
// Which parameters of the job's model the servers hold row by row (--table-exchange, ps/table_plan.h): the row
// tables (embedding tables) of a run with servers (sync, async, ssp), unless --table-exchange dense. Elsewhere
// tables are parameters like any other: all-reduce averages their gradient densely among the trainers (there
// are no servers to hold rows; an all-gather of the touched rows would be the sparse alternative), local
// training has nothing to ship.
#include <vector>

#include "ps/table_plan.h"
#include "train/job_context.h"

namespace pstrain::train {

// Empty when no table goes by rows. Throws Error(kUsage) when a table must go by rows (--table-exchange sparse)
// but reads ids computed by another layer: only ids read straight from the data can be fetched before the
// forward pass.
ps::TablePlan plan_row_tables(const JobContext& job);

// For ps::ShardPlan: per parameter of the model, whether `tables` holds it by rows.
std::vector<bool> held_by_rows(const nn::ModelPlan& model, const ps::TablePlan& tables);

}  // namespace pstrain::train
