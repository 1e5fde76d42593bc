#include "comm/watchdog.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <vector>

#include "core/error.h"

namespace pstrain::comm {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

std::unique_ptr<Watchdog> instance;

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

fs::path heartbeat_path(const fs::path& output_dir, int rank) {
  return output_dir / cat("node_", rank) / "heartbeat";
}

}  // namespace

void Watchdog::start(int rank, int world_size, double timeout_seconds, fs::path output_dir) {
  instance.reset(new Watchdog(rank, world_size, timeout_seconds, std::move(output_dir)));
}

void Watchdog::stop() {
  instance.reset();
}

// The clock is stored before the name: a watchdog tick that reads the new name with the old clock would see a
// long wait that has just begun. One seen the other way round only delays an expiry by a tick.
Watchdog::Wait::Wait(const char* what) {
  if (!instance) return;
  outer_ = instance->waiting_for_.load();
  instance->waiting_since_ns_.store(now_ns());
  instance->waiting_for_.store(what);
}

Watchdog::Wait::~Wait() {
  if (!instance) return;
  if (outer_ != nullptr) instance->waiting_since_ns_.store(now_ns());
  instance->waiting_for_.store(outer_);
}

Watchdog::Watchdog(int rank, int world_size, double timeout_seconds, fs::path output_dir)
    : rank_(rank),
      world_size_(world_size),
      timeout_seconds_(timeout_seconds),
      output_dir_(std::move(output_dir)),
      thread_([this] { run(); }) {}

Watchdog::~Watchdog() {
  running_.store(false);
  if (thread_.joinable()) thread_.join();
}

void Watchdog::run() {
  auto last_tick = Clock::now();
  while (running_.load()) {
    // A long gap between two ticks means this very process was stopped (SIGSTOP) and has just been resumed,
    // typically by mpirun ending the job: another rank has already reported it, so leave without a message.
    const auto tick = Clock::now();
    const bool was_stopped = std::chrono::duration<double>(tick - last_tick).count() > 3.0;
    last_tick = tick;
    if (was_stopped && waiting_for_.load() != nullptr) ::_exit(static_cast<int>(ExitCode::kTimeout));
    const char* what = waiting_for_.load();
    const double waited = what ? static_cast<double>(now_ns() - waiting_since_ns_.load()) * 1e-9 : 0.0;
    write_heartbeat(what ? what : "working", waited);
    if (what && waited > timeout_seconds_ && waiting_for_.load() == what) expire(what, waited);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

void Watchdog::write_heartbeat(const char* state, double waited) {
  // Written under a temporary name and renamed, so readers never see half a line. Wall-clock seconds, since
  // other nodes compare them with their own clocks (good enough for a timeout of many seconds).
  const fs::path path = heartbeat_path(output_dir_, rank_);
  const fs::path temporary = path.string() + ".tmp";
  {
    std::ofstream out(temporary);
    if (!out) return;  // the folder is gone or unwritable: the heartbeat is a diagnostic, not a duty
    out << std::fixed << std::setprecision(3)
        << std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count() << ' '
        << (waited > 0 ? "waiting" : "working") << ' ' << state << '\n';
  }
  std::error_code ignored;
  fs::rename(temporary, path, ignored);
}

void Watchdog::expire(const char* what, double waited) {
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::vector<std::string> silent;
  std::vector<std::string> busy;
  bool lower_rank_reports = false;  // one message per job: the lowest rank still alive and waiting prints it
  for (int rank = 0; rank < world_size_; ++rank) {
    if (rank == rank_) continue;
    std::ifstream in(heartbeat_path(output_dir_, rank));
    double stamp = 0;
    std::string state;
    if (!(in >> stamp >> state)) {
      silent.push_back(cat(rank, " (no heartbeat)"));
    } else if (now - stamp > 3.0) {
      silent.push_back(cat(rank, " (silent for ", static_cast<int>(now - stamp), " s)"));
    } else if (state == "working") {
      busy.push_back(cat(rank));
    } else if (rank < rank_) {
      lower_rank_reports = true;
    }
  }
  if (lower_rank_reports) ::_exit(static_cast<int>(ExitCode::kTimeout));
  std::ostringstream message;
  message << "pstrain: error: rank " << rank_ << " waited " << static_cast<int>(waited) << " s (--timeout-seconds "
          << timeout_seconds_ << ") in " << what << "; ";
  if (!silent.empty()) {
    message << "rank(s) that stopped responding: ";
    for (std::size_t i = 0; i < silent.size(); ++i) message << (i ? ", " : "") << silent[i];
  } else if (!busy.empty()) {
    message << "rank(s) not arriving: ";
    for (std::size_t i = 0; i < busy.size(); ++i) message << (i ? ", " : "") << busy[i];
  } else {
    message << "every other rank is waiting too";
  }
  message << "; ending the job\n";
  std::cerr << message.str() << std::flush;
  ::_exit(static_cast<int>(ExitCode::kTimeout));
}

}  // namespace pstrain::comm
