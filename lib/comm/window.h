#pragma once
// RAII for MPI windows allocated by MPI (MPI_Win_allocate, so the library may place them in shared memory on
// one node) and for passive-target lock epochs.
#include <mpi.h>

#include <cstddef>
#include <exception>
#include <span>
#include <utility>

#include "comm/mpi_check.h"

namespace pstrain::comm {

template <typename T>
class Window {
 public:
  Window() = default;
  // Collective over `comm`. A rank that exposes nothing passes count = 0.
  Window(MPI_Comm comm, std::size_t count) : count_(count) {
    T* base = nullptr;
    MPI_CHECK(
        MPI_Win_allocate(static_cast<MPI_Aint>(count * sizeof(T)), sizeof(T), MPI_INFO_NULL, comm, &base, &window_));
    MPI_CHECK(MPI_Win_set_errhandler(window_, MPI_ERRORS_RETURN));
    base_ = base;
  }
  // MPI_Win_free is collective: while an exception unwinds, the other ranks are not freeing with us, so we
  // leave the window to MPI_Abort instead of hanging here.
  ~Window() {
    if (window_ != MPI_WIN_NULL && std::uncaught_exceptions() == 0) MPI_Win_free(&window_);
  }
  Window(Window&& other) noexcept { swap(other); }
  Window& operator=(Window&& other) noexcept {
    if (this != &other) {
      Window moved(std::move(other));
      swap(moved);
    }
    return *this;
  }
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;

  MPI_Win handle() const { return window_; }
  // This rank's exposed memory. Touch it only inside a lock epoch on this rank (see WindowLock).
  std::span<T> local() const { return {base_, count_}; }

 private:
  void swap(Window& other) noexcept {
    std::swap(window_, other.window_);
    std::swap(base_, other.base_);
    std::swap(count_, other.count_);
  }
  MPI_Win window_ = MPI_WIN_NULL;
  T* base_ = nullptr;
  std::size_t count_ = 0;
};

// A passive-target epoch on one target: MPI_Win_lock in the constructor, MPI_Win_unlock (which completes every
// operation of the epoch at origin and target) in the destructor or in unlock().
class WindowLock {
 public:
  enum class Mode { kShared, kExclusive };
  WindowLock(MPI_Win window, int target, Mode mode) : window_(window), target_(target) {
    MPI_CHECK(MPI_Win_lock(mode == Mode::kShared ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE, target, 0, window));
  }
  ~WindowLock() {
    if (locked()) MPI_Win_unlock(target_, window_);
  }
  WindowLock(const WindowLock&) = delete;
  WindowLock& operator=(const WindowLock&) = delete;

  void unlock() {
    const MPI_Win window = window_;
    window_ = MPI_WIN_NULL;
    MPI_CHECK(MPI_Win_unlock(target_, window));
  }

 private:
  bool locked() const { return window_ != MPI_WIN_NULL; }
  MPI_Win window_;
  int target_;
};

// A passive-target epoch on every rank of a window at once (MPI_Win_lock_all, a shared lock), held for as long as
// the object lives: the epoch of windows whose words are only ever touched by atomic operations (MPI_Accumulate,
// MPI_Get_accumulate, MPI_Fetch_and_op) completed by MPI_Win_flush, so that nobody ever waits for a lock. The
// destructor leaves an unwinding epoch to MPI_Abort, as Window does (MPI_Win_unlock_all may wait for other ranks).
class LockAllEpoch {
 public:
  explicit LockAllEpoch(MPI_Win window) : window_(window) { MPI_CHECK(MPI_Win_lock_all(0, window)); }
  ~LockAllEpoch() {
    if (std::uncaught_exceptions() == 0) MPI_Win_unlock_all(window_);
  }
  LockAllEpoch(const LockAllEpoch&) = delete;
  LockAllEpoch& operator=(const LockAllEpoch&) = delete;

 private:
  MPI_Win window_;
};

}  // namespace pstrain::comm
