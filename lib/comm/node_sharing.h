#pragma once
// What the ranks of a job share on their nodes, for the choices of how to overlap communication with computation
// (job/job.cc): a protocol that needs a peer to answer while this rank computes (a sync shard streaming its
// blocks, ps/block_stream.h) only pays when that peer has a processor of its own; one-sided puts streamed during
// the backward pass (ps/push_stream.h) were measured to pay where they are copies within one node's memory.
#include <mpi.h>

namespace pstrain::comm {

// Collective over `comm`; the same answer on every rank. True when on every node the ranks there are no more than
// the processors they may run on together: the union of their affinity masks, which follows mpirun's binding,
// cpusets and Slurm's allocation (a container's CPU quota without a cpuset is not seen).
bool every_rank_has_a_processor(MPI_Comm comm);

// Collective over `node` (the ranks of one node): the CPU threads this rank may run (core/cpu_allocation.h): its
// affinity mask shared with the node's ranks whose mask is the same, within a container's CPU limit and Slurm's
// --cpus-per-task.
int cpu_threads_for_this_rank(MPI_Comm node);

// Collective over `comm`; the same answer on every rank. True when all its ranks run on one node (share memory).
bool all_ranks_on_one_node(MPI_Comm comm);

}  // namespace pstrain::comm
