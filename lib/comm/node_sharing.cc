#include "comm/node_sharing.h"

#include <sched.h>

#include "comm/communicator.h"
#include "comm/mpi_check.h"

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

bool all_ranks_on_one_node(MPI_Comm comm) {
  const Communicator node = Communicator::split_shared(comm);
  int size = 0;
  MPI_CHECK(MPI_Comm_size(comm, &size));
  return node.size() == size;  // then every node's share is the whole, or none is
}

}  // namespace pstrain::comm
