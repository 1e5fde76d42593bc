#include "comm/mpi_check.h"

#include "core/error.h"

namespace pstrain::comm {

void throw_mpi_error(int code, const char* call, const char* file, int line) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  int rank = -1;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  throw Error(ExitCode::kInternal, cat(call, " failed on rank ", rank, " at ", file, ":", line, ": ", text));
}

}  // namespace pstrain::comm
