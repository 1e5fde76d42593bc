#pragma once
// The control window (ps/windows.h: counters, push announcements, clocks), touched by atomic operations only.
//
// Why no locks: servers poll their own words all the time, and under osc/rdma (what Open MPI 4.1 picks on one node
// whenever its shared-memory transport can copy between processes, at any rank count) MPI_Win_lock is a
// reader-preferring spin lock: a server's exclusive lock on its control words waits until no trainer holds a
// shared one, and a trainer yields the processor inside MPI_Win_unlock while still holding it. With 28 trainers
// polling shard 0 on two cores, that count was never 0 again: the server spun in MPI_Win_lock and no push was ever
// applied (issue 31). Here every rank opens one shared epoch on every rank (MPI_Win_lock_all) for the window's
// lifetime, and every word is read and written with MPI_Get_accumulate / MPI_Accumulate / MPI_Fetch_and_op
// (atomic per word against each other), each completed at its target by MPI_Win_flush before the call returns:
// nobody waits for anybody's lock, and a call made after another one returns sees its effect.
// Words written together are not written atomically together: a writer that needs a reader to see word A whenever
// it sees word B writes A first (two calls), and the reader reads B, then A.
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "comm/window.h"

namespace pstrain::ps {

class ControlWords {
 public:
  // Collective over `world`: `count` words on this rank (0 where it exposes none), all 0.
  ControlWords(MPI_Comm world, std::size_t count);

  // Target's words [index, index + out.size()) into `out`.
  void read(int target, std::size_t index, std::span<std::int64_t> out);
  std::int64_t read(int target, std::size_t index);
  // `values` into target's words from `index`.
  void write(int target, std::size_t index, std::span<const std::int64_t> values);
  void write(int target, std::size_t index, std::int64_t value) { write(target, index, {&value, 1}); }
  // One atomic read-modify-write of a word (MPI_Fetch_and_op); returns the value before.
  std::int64_t fetch_and_op(int target, std::size_t index, std::int64_t operand, MPI_Op op);

 private:
  comm::Window<std::int64_t> window_;
  comm::LockAllEpoch epoch_;  // declared after window_: ends before the window is freed
};

}  // namespace pstrain::ps
