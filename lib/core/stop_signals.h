#pragma once
// SIGTERM and SIGUSR1 ask a training job to checkpoint and stop (Slurm's --signal, Kubernetes' termination, the
// elastic driver). They must never interrupt the computation: oneDNN's JIT sgemm kernels (2.x, Debian 12's 2.6.3;
// fixed upstream in oneDNN PR #4855) point the stack pointer into a heap workspace, so a signal handled on a thread
// running one writes its frame (several KiB with the AVX-512 state) into the heap, and the next free() aborts
// ("corrupted size vs. prev_size"). The listener therefore blocks both signals in the thread that creates it, so
// that every thread started afterwards (MPI's, the watchdog, oneDNN's workers) blocks them too, and takes them on a
// thread of its own, which only sets the flag the trainers read at step boundaries.
#include <pthread.h>

#include <csignal>
#include <thread>

namespace pstrain {

class StopSignalListener {
 public:
  // In the main thread, before MPI or any computation starts threads.
  StopSignalListener();
  ~StopSignalListener();  // restores the creating thread's signal mask
  StopSignalListener(const StopSignalListener&) = delete;
  StopSignalListener& operator=(const StopSignalListener&) = delete;

 private:
  void listen();

  sigset_t previous_mask_{};
  pthread_t listener_{};
  std::thread thread_;
};

// True once SIGTERM or SIGUSR1 reached the process (through the listener, or through the handler that stands by
// for a thread started before the listener, which does not block them).
bool stop_signal_received();

}  // namespace pstrain
