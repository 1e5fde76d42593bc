#pragma once
// The watchdog: every blocking wait of a rank runs under it, so that a rank that dies or stops responding ends
// the job within --timeout-seconds instead of hanging it.
//
// Each rank runs one watchdog thread. It (1) rewrites OUTPUT/node_<rank>/heartbeat every 0.5 s with what the
// rank is doing, and (2) when the main thread has been inside one wait (a Wait guard) for longer than the timeout,
// reads every rank's heartbeat, names the ranks whose heartbeat stopped (a stopped or dead process) or that are
// not waiting (stuck elsewhere), prints one message and _exit()s with ExitCode::kTimeout. mpirun then ends the
// other ranks. The thread never calls MPI (we run MPI_THREAD_FUNNELED).
#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace pstrain::comm {

class Watchdog {
 public:
  // Starts the process-wide watchdog; before start() (unit tests, pstrain-data) Wait guards do nothing.
  static void start(int rank, int world_size, double timeout_seconds, std::filesystem::path output_dir);
  static void stop();

  // RAII: the main thread is waiting for other ranks while this lives. Cheap: a few atomic loads and stores.
  // Guards nest (a checkpoint joined inside the async end-of-pass meeting): the innermost one is watched, and
  // closing it hands the watch back to the one around it, named as before and with its clock restarted (the
  // inner wait ended, so the other ranks were alive until then). Only the thread that runs MPI uses guards.
  class Wait {
   public:
    explicit Wait(const char* what);
    ~Wait();
    Wait(const Wait&) = delete;
    Wait& operator=(const Wait&) = delete;

   private:
    const char* outer_ = nullptr;  // the wait this one opened inside, or nullptr
  };

  ~Watchdog();

 private:
  Watchdog(int rank, int world_size, double timeout_seconds, std::filesystem::path output_dir);
  void run();
  void write_heartbeat(const char* state, double waited);
  [[noreturn]] void expire(const char* what, double waited);

  int rank_;
  int world_size_;
  double timeout_seconds_;
  std::filesystem::path output_dir_;
  std::atomic<const char*> waiting_for_{nullptr};
  std::atomic<std::int64_t> waiting_since_ns_{0};
  std::atomic<bool> running_{true};
  std::thread thread_;
};

}  // namespace pstrain::comm
