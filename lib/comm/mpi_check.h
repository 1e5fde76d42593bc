#pragma once
// One check macro for MPI: a failing call throws pstrain::Error(kInternal) naming the call, MPI's own error
// string, the file, line and world rank. The world communicator and every window use MPI_ERRORS_RETURN so the
// error reaches this macro instead of aborting with a generic banner.
#include <mpi.h>

#include <string>

namespace pstrain::comm {

[[noreturn]] void throw_mpi_error(int code, const char* call, const char* file, int line);

}  // namespace pstrain::comm

#define MPI_CHECK(call)                                                                                               \
  do {                                                                                                                \
    const int mpi_check_code_ = (call);                                                                               \
    if (mpi_check_code_ != MPI_SUCCESS) ::pstrain::comm::throw_mpi_error(mpi_check_code_, #call, __FILE__, __LINE__); \
  } while (0)
