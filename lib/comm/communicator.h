#pragma once
// RAII for communicators we create, and the collective failure agreement used before any RMA epoch exists.
#include <mpi.h>

#include <exception>
#include <optional>
#include <string>
#include <utility>

#include "comm/mpi_check.h"

namespace pstrain::comm {

class Communicator {
 public:
  Communicator() = default;
  // Collective over `parent` (MPI_Comm_split). Ranks passing MPI_UNDEFINED get an empty Communicator.
  static Communicator split(MPI_Comm parent, int color, int key);
  // Collective over `parent` (MPI_Comm_dup): the same ranks, a context of its own, so that one protocol's
  // messages never match another's.
  static Communicator duplicate(MPI_Comm parent);
  // Ranks that share memory with this one (one node): the local rank chooses a GPU.
  static Communicator split_shared(MPI_Comm parent);
  ~Communicator() {  // collective, like Window's destructor: skipped while an exception unwinds
    if (comm_ != MPI_COMM_NULL && std::uncaught_exceptions() == 0) MPI_Comm_free(&comm_);
  }
  Communicator(Communicator&& other) noexcept { std::swap(comm_, other.comm_); }
  Communicator& operator=(Communicator&& other) noexcept {
    std::swap(comm_, other.comm_);
    return *this;
  }
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  MPI_Comm handle() const { return comm_; }
  int rank() const;
  int size() const;

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

// Collective: every rank passes the failure it saw (or nothing). If any rank failed, the lowest failing rank
// prints its message (one message, not N copies of it) and every rank gets back that rank's exit code; else 0.
// Used to validate configuration and data before windows exist, so every rank exits cleanly together.
struct Failure {
  int exit_code = 1;
  std::string message;
};
int agree_on_failure(MPI_Comm comm, const std::optional<Failure>& local_failure);

}  // namespace pstrain::comm
