#include "comm/node_sharing.h"

#include <sched.h>

#include <cstdlib>
#include <optional>
#include <vector>

#include "comm/communicator.h"
#include "comm/mpi_check.h"
#include "core/cpu_allocation.h"

namespace pstrain::comm {

bool every_rank_has_a_processor(MPI_Comm comm) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) CPU_ZERO(&allowed);  // unknown: counts as none
  const Communicator node = Communicator::split_shared(comm);
  MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &allowed, static_cast<int>(sizeof(allowed)), MPI_BYTE, MPI_BOR, node.handle()));
  int enough = CPU_COUNT(&allowed) >= node.size() ? 1 : 0;
  MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &enough, 1, MPI_INT, MPI_LAND, comm));
  return enough != 0;
}

int cpu_threads_for_this_rank(MPI_Comm node) {
  cpu_set_t mine;
  CPU_ZERO(&mine);
  if (sched_getaffinity(0, sizeof(mine), &mine) != 0) CPU_SET(0, &mine);
  int size = 1;
  MPI_CHECK(MPI_Comm_size(node, &size));
  std::vector<cpu_set_t> masks(static_cast<std::size_t>(size));
  MPI_CHECK(MPI_Allgather(&mine, static_cast<int>(sizeof(mine)), MPI_BYTE, masks.data(), static_cast<int>(sizeof(mine)),
                          MPI_BYTE, node));
  int sharing = 0;
  for (const cpu_set_t& mask : masks) sharing += CPU_EQUAL(&mask, &mine) ? 1 : 0;
  std::optional<int> cpus_per_task;
  if (const char* slurm = std::getenv("SLURM_CPUS_PER_TASK")) cpus_per_task = std::atoi(slurm);
  return threads_per_rank(CPU_COUNT(&mine), sharing, size, cgroup_cpu_limit(), cpus_per_task);
}

bool all_ranks_on_one_node(MPI_Comm comm) {
  const Communicator node = Communicator::split_shared(comm);
  int size = 0;
  MPI_CHECK(MPI_Comm_size(comm, &size));
  return node.size() == size;  // then every node's share is the whole, or none is
}

}  // namespace pstrain::comm
