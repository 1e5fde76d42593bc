#pragma once
// RAII for MPI_Init_thread / MPI_Finalize. The destructor finalizes under the watchdog (comm/watchdog.h), then
// stops it: the watchdog started for training stays up until the ranks have left the job.
//
// We ask for MPI_THREAD_FUNNELED, never MULTIPLE: the one-sided component that works across nodes over TCP
// (osc/pt2pt) refuses MPI_THREAD_MULTIPLE (PLATFORM.md). Only the main thread calls MPI.
#include <mpi.h>

namespace pstrain::comm {

class MpiEnvironment {
 public:
  MpiEnvironment(int& argc, char**& argv);
  ~MpiEnvironment();
  MpiEnvironment(const MpiEnvironment&) = delete;
  MpiEnvironment& operator=(const MpiEnvironment&) = delete;

  int world_rank() const { return rank_; }
  int world_size() const { return size_; }

  // Ends every rank of the job with `exit_code` (MPI_Abort); used after an error that other ranks cannot learn
  // about through a collective (they may be blocked in a barrier or an RMA epoch).
  [[noreturn]] static void abort_job(int exit_code);

 private:
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace pstrain::comm
