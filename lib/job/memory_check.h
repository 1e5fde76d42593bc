#pragma once
// Whether the model fits this node, from the plan alone, before anything large is allocated: a row table too
// big for its servers (or a model too big for its trainers) ends the job at the start with the arithmetic,
// instead of with the kernel's OOM killer half-way into the first pass.
#include <mpi.h>

#include <cstdint>
#include <optional>
#include <string>

#include "comm/communicator.h"
#include "ps/table_plan.h"
#include "run_common/job_context.h"

namespace pstrain::job {

// What this rank will hold for the model, in bytes, and how that figure is made.
struct MemoryNeed {
  double bytes = 0;
  std::string arithmetic;
};
MemoryNeed memory_need(const run_common::JobContext& job, const ps::TablePlan& tables);

// Collective over `node` (the ranks of one node): a failure (kUsage) when the ranks' needs together exceed the
// node's available memory (MemAvailable in /proc/meminfo). Every rank of the node gets the same answer.
std::optional<comm::Failure> check_node_memory(const run_common::JobContext& job, const ps::TablePlan& tables,
                                               MPI_Comm node);

// The most memory this process has held resident so far (getrusage's ru_maxrss), in bytes: what the end of a
// run reports per rank, the figure to compare with memory_need().
double peak_resident_bytes();

}  // namespace pstrain::job
