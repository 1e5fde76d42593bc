#include "comm/environment.h"

#include <cstdlib>
#include <iostream>

#include "comm/mpi_check.h"
#include "comm/watchdog.h"
#include "core/error.h"

namespace pstrain::comm {

MpiEnvironment::MpiEnvironment(int& argc, char**& argv) {
  int provided = 0;
  MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided));
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank_));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size_));
  if (provided < MPI_THREAD_FUNNELED) {
    throw Error(ExitCode::kInternal, "the MPI library does not provide MPI_THREAD_FUNNELED");
  }
}

MpiEnvironment::~MpiEnvironment() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) {
    // MPI_Finalize waits for every rank: one that stops responding now (found by the soak: a SIGSTOP just after
    // training, the job hung until killed) would hold the others here for ever, so the watchdog, when running,
    // watches this wait too and stops only after it.
    Watchdog::Wait leaving("leaving the job (MPI_Finalize, which waits for every rank)");
    MPI_Finalize();
  }
  Watchdog::stop();
}

void MpiEnvironment::abort_job(int exit_code) {
  std::cout.flush();
  std::cerr.flush();
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);  // MPI_Abort does not return; this keeps [[noreturn]] honest.
}

}  // namespace pstrain::comm
