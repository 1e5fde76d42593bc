#include "core/stop_signals.h"

#include <atomic>

#include "core/error.h"

namespace pstrain {

namespace {

std::atomic<bool> stop_requested{false};
std::atomic<bool> listener_quitting{false};

extern "C" void on_stop_signal(int) {
  stop_requested.store(true);
}

sigset_t stop_signal_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGUSR1);
  return set;
}

// The disposition stays a handler, not the default (which ends the process): a thread that does not block the
// signals (one a library started before main) may still be the one the kernel picks.
void install_flag_handler() {
  struct sigaction action = {};
  action.sa_handler = on_stop_signal;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGUSR1, &action, nullptr);
}

}  // namespace

StopSignalListener::StopSignalListener() {
  install_flag_handler();
  const sigset_t set = stop_signal_set();
  if (const int error = pthread_sigmask(SIG_BLOCK, &set, &previous_mask_); error != 0) {
    throw Error(ExitCode::kInternal, cat("pthread_sigmask failed (error ", error, ")"));
  }
  listener_quitting.store(false);
  thread_ = std::thread([this] { listen(); });
  listener_ = thread_.native_handle();
}

StopSignalListener::~StopSignalListener() {
  listener_quitting.store(true);
  pthread_kill(listener_, SIGUSR1);  // wakes sigwait; the flag is not set for it
  thread_.join();
  pthread_sigmask(SIG_SETMASK, &previous_mask_, nullptr);
}

void StopSignalListener::listen() {
  const sigset_t set = stop_signal_set();
  for (;;) {
    int number = 0;
    if (sigwait(&set, &number) != 0) continue;
    if (listener_quitting.load()) return;
    stop_requested.store(true);
  }
}

bool stop_signal_received() {
  return stop_requested.load();
}

}  // namespace pstrain
