#include "exchange/step_protocol.h"

#include <mpi.h>

#include "comm/mpi_check.h"
#include "comm/watchdog.h"

namespace pstrain::exchange {

void meet_all_ranks(const char* what) {
  const comm::Watchdog::Wait wait(what);
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

void StepFlagAgreement::begin(MPI_Comm world, int flags) {
  flags_ = flags;
  MPI_CHECK(MPI_Iallreduce(&flags_, &agreed_, 1, MPI_INT, MPI_BOR, world, &request_));
}

int StepFlagAgreement::finish() {
  MPI_CHECK(MPI_Wait(&request_, MPI_STATUS_IGNORE));
  return agreed_;
}

void all_gradients_written() {
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

int agree_on_step_flags(int flags) {
  int agreed = 0;
  MPI_CHECK(MPI_Allreduce(&flags, &agreed, 1, MPI_INT, MPI_BOR, MPI_COMM_WORLD));
  return agreed;
}

int wait_for_the_servers_update(int flags) {
  all_gradients_written();
  return agree_on_step_flags(flags);  // the servers updated meanwhile (ps::ShardServer::sync_step)
}

void clocks_published(MPI_Comm trainers) {
  MPI_CHECK(MPI_Barrier(trainers));
}

void every_trainer_pulled(MPI_Comm trainers) {
  MPI_CHECK(MPI_Barrier(trainers));
}

void dispatcher_rewound(MPI_Comm trainers) {
  MPI_CHECK(MPI_Barrier(trainers));
}

void lead_done_with_pass(MPI_Comm trainers) {
  MPI_CHECK(MPI_Barrier(trainers));
}

void lead_done_evaluating(MPI_Comm trainers) {
  MPI_CHECK(MPI_Barrier(trainers));
}

PassEndMeeting::PassEndMeeting(MPI_Comm trainers) {
  MPI_CHECK(MPI_Ibarrier(trainers, &request_));
}

bool PassEndMeeting::arrived() {
  int done = 0;
  MPI_CHECK(MPI_Test(&request_, &done, MPI_STATUS_IGNORE));
  return done != 0;
}

std::int64_t end_async_checkpoint(std::int64_t request_at_root, const std::function<void()>& clear_at_root) {
  const comm::Watchdog::Wait wait("the end of an async checkpoint");
  int rank = 0;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  std::int64_t request = rank == 0 ? request_at_root : 0;
  MPI_CHECK(MPI_Bcast(&request, 1, MPI_INT64_T, 0, MPI_COMM_WORLD));
  if (rank == 0 && clear_at_root) clear_at_root();
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  return request;
}

}  // namespace pstrain::exchange
