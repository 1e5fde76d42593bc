#include "ps/control_words.h"

#include <algorithm>

#include "comm/mpi_check.h"

namespace pstrain::ps {

namespace {

// Zeroed before any epoch opens: no other rank reaches the words before the job's start barrier.
comm::Window<std::int64_t> zeroed_window(MPI_Comm world, std::size_t count) {
  comm::Window<std::int64_t> window(world, count);
  std::ranges::fill(window.local(), 0);
  return window;
}

}  // namespace

ControlWords::ControlWords(MPI_Comm world, std::size_t count)
    : window_(zeroed_window(world, count)), epoch_(window_.handle()) {
  MPI_CHECK(MPI_Win_sync(window_.handle()));  // the zeros are the window's words from here on
}

void ControlWords::read(int target, std::size_t index, std::span<std::int64_t> out) {
  const int count = static_cast<int>(out.size());
  MPI_CHECK(MPI_Get_accumulate(nullptr, 0, MPI_INT64_T, out.data(), count, MPI_INT64_T, target,
                               static_cast<MPI_Aint>(index), count, MPI_INT64_T, MPI_NO_OP, window_.handle()));
  MPI_CHECK(MPI_Win_flush(target, window_.handle()));
}

std::int64_t ControlWords::read(int target, std::size_t index) {
  std::int64_t value = 0;
  read(target, index, {&value, 1});
  return value;
}

void ControlWords::write(int target, std::size_t index, std::span<const std::int64_t> values) {
  const int count = static_cast<int>(values.size());
  MPI_CHECK(MPI_Accumulate(values.data(), count, MPI_INT64_T, target, static_cast<MPI_Aint>(index), count, MPI_INT64_T,
                           MPI_REPLACE, window_.handle()));
  MPI_CHECK(MPI_Win_flush(target, window_.handle()));
}

std::int64_t ControlWords::fetch_and_op(int target, std::size_t index, std::int64_t operand, MPI_Op op) {
  std::int64_t previous = 0;
  MPI_CHECK(
      MPI_Fetch_and_op(&operand, &previous, MPI_INT64_T, target, static_cast<MPI_Aint>(index), op, window_.handle()));
  MPI_CHECK(MPI_Win_flush(target, window_.handle()));
  return previous;
}

}  // namespace pstrain::ps
