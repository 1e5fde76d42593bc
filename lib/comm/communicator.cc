#include "comm/communicator.h"

#include <climits>
#include <iostream>

namespace pstrain::comm {

Communicator Communicator::split(MPI_Comm parent, int color, int key) {
  Communicator result;
  MPI_CHECK(MPI_Comm_split(parent, color, key, &result.comm_));
  if (result.comm_ != MPI_COMM_NULL) MPI_CHECK(MPI_Comm_set_errhandler(result.comm_, MPI_ERRORS_RETURN));
  return result;
}

Communicator Communicator::duplicate(MPI_Comm parent) {
  Communicator result;
  MPI_CHECK(MPI_Comm_dup(parent, &result.comm_));
  return result;
}

Communicator Communicator::split_shared(MPI_Comm parent) {
  Communicator result;
  MPI_CHECK(MPI_Comm_split_type(parent, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &result.comm_));
  return result;
}

int Communicator::rank() const {
  int rank = 0;
  MPI_CHECK(MPI_Comm_rank(comm_, &rank));
  return rank;
}

int Communicator::size() const {
  int size = 0;
  MPI_CHECK(MPI_Comm_size(comm_, &size));
  return size;
}

int agree_on_failure(MPI_Comm comm, const std::optional<Failure>& local_failure) {
  int rank = 0;
  MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const int mine = local_failure ? rank : INT_MAX;
  int first_failed = INT_MAX;
  MPI_CHECK(MPI_Allreduce(&mine, &first_failed, 1, MPI_INT, MPI_MIN, comm));
  if (first_failed == INT_MAX) return 0;
  int code = local_failure ? local_failure->exit_code : 0;
  MPI_CHECK(MPI_Bcast(&code, 1, MPI_INT, first_failed, comm));
  if (rank == first_failed) std::cerr << "pstrain: error: " << local_failure->message << std::endl;
  return code;
}

}  // namespace pstrain::comm
