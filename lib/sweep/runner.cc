#include "sweep/runner.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <fstream>
#include <map>

#include "checkpoint/checkpoint.h"
#include "checkpoint/pass_folder.h"
#include "core/error.h"
#include "core/files.h"
#include "core/timing.h"

namespace fs = std::filesystem;

namespace pstrain::sweep {

namespace {

std::string timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y%m%d-%H%M%S", &local);
  return buffer;
}

std::string last_line_of(const fs::path& log) {
  std::ifstream in(log);
  std::string line, last;
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  return last;
}

struct Running {
  ChildProcess process;
  const HyperparameterSet* set;
  std::chrono::steady_clock::time_point started;
};

}  // namespace

std::size_t RunSummary::count(SetState state) const {
  std::size_t n = 0;
  for (const auto& outcome : outcomes) n += outcome.state == state;
  return n;
}

fs::path final_done_marker(const fs::path& sweep_dir, const HyperparameterSet& set) {
  return run_dir(sweep_dir, set.id) / checkpoint::pass_folder_name(passes_of(set.flags) - 1) / "done";
}

bool set_complete(const fs::path& sweep_dir, const HyperparameterSet& set) {
  return fs::exists(final_done_marker(sweep_dir, set));
}

std::optional<fs::path> move_incomplete_aside(const fs::path& sweep_dir, const HyperparameterSet& set) {
  const fs::path folder = run_dir(sweep_dir, set.id);
  if (!fs::exists(folder) || set_complete(sweep_dir, set)) return std::nullopt;
  if (!checkpoint::list_checkpoints(folder).empty()) return std::nullopt;  // pstrain --resume auto continues it
  const std::string base = set_name(set.id) + ".incomplete-" + timestamp();
  fs::path target = folder.parent_path() / base;
  for (int n = 2; fs::exists(target); ++n) target = folder.parent_path() / cat(base, "-", n);
  std::error_code error;
  fs::rename(folder, target, error);
  if (error) throw Error(ExitCode::kOutput, cat("cannot move ", folder.string(), " aside: ", error.message()));
  return target;
}

std::vector<std::string> run_command(const RunSettings& settings, const HyperparameterSet& set) {
  std::vector<std::string> command;
  if (settings.ranks > 1) {
    command.push_back(settings.mpirun);
    command.insert(command.end(), settings.mpirun_args.begin(), settings.mpirun_args.end());
    command.push_back("-np");
    command.push_back(std::to_string(settings.ranks));
  }
  command.push_back(settings.pstrain.string());
  command.push_back("--data-dir");
  command.push_back(settings.data_dir.string());
  command.push_back("--output-dir");
  command.push_back(run_dir(settings.sweep_dir, set.id).string());
  // A set run again (interrupted, or its Job retried) continues from its newest checkpoint; a new one starts.
  command.push_back("--resume");
  command.push_back("auto");
  for (const auto& word : flags_to_args(set.flags)) command.push_back(word);
  return command;
}

RunSummary run_sets(const RunSettings& settings, const std::vector<HyperparameterSet>& sets, std::ostream& progress) {
  if (settings.parallel < 1) throw Error(ExitCode::kUsage, "--parallel must be >= 1");
  if (settings.ranks < 1) throw Error(ExitCode::kUsage, "--np must be >= 1");
  // A wrong --pstrain is found before any set folder is touched, not as N identical failures.
  if (settings.pstrain.has_parent_path() && ::access(settings.pstrain.c_str(), X_OK) != 0) {
    throw Error(ExitCode::kUsage, cat("--pstrain ", settings.pstrain.string(), " is not an executable file"));
  }
  // K runs of R ranks share this machine's processors, which no run can see from inside: each rank gets an equal
  // share (at least one BLAS thread) unless the caller chose otherwise.
  const long processors = std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN));
  const long share = std::max(1L, processors / (static_cast<long>(settings.parallel) * settings.ranks));
  ::setenv("OPENBLAS_NUM_THREADS", std::to_string(share).c_str(), 0);

  std::map<int, SetOutcome> outcomes;
  std::deque<const HyperparameterSet*> pending;
  for (const auto& set : sets) {
    if (set_complete(settings.sweep_dir, set)) {
      progress << set_name(set.id) << ": already complete, skipped" << std::endl;
      outcomes[set.id] = {set.id, SetState::kSkipped, "", 0};
    } else {
      pending.push_back(&set);
    }
  }

  std::map<pid_t, Running> running;
  const auto finish = [&](Running& run, ExitStatus status) {
    const auto& set = *run.set;
    const double seconds = seconds_since(run.started);
    const fs::path log = run_dir(settings.sweep_dir, set.id) / "pstrain.log";
    if (status.ok() && set_complete(settings.sweep_dir, set)) {
      progress << set_name(set.id) << ": done in " << seconds << " s" << std::endl;
      outcomes[set.id] = {set.id, SetState::kSucceeded, "", 0};
      return;
    }
    std::string detail =
        status.ok() ? cat("exit 0 without ", final_done_marker(settings.sweep_dir, set).string()) : status.describe();
    if (settings.capture_logs) detail += cat(": ", last_line_of(log), " (", log.string(), ")");
    progress << set_name(set.id) << ": FAILED after " << seconds << " s: " << detail << std::endl;
    outcomes[set.id] = {set.id, SetState::kFailed, detail, status.ok() ? 1 : status.code};
  };

  while (!pending.empty() || !running.empty()) {
    while (!pending.empty() && running.size() < static_cast<std::size_t>(settings.parallel)) {
      const HyperparameterSet* set = pending.front();
      pending.pop_front();
      if (const auto moved = move_incomplete_aside(settings.sweep_dir, *set)) {
        progress << set_name(set->id) << ": incomplete run moved to " << moved->string() << ", running again"
                 << std::endl;
      }
      const fs::path folder = run_dir(settings.sweep_dir, set->id);
      std::optional<fs::path> log;
      if (settings.capture_logs) {
        ensure_writable_folder(folder);
        log = folder / "pstrain.log";
      }
      ChildProcess process(run_command(settings, *set), log);
      progress << set_name(set->id) << ": started (pid " << process.pid() << "): " << flags_to_shell(set->flags)
               << std::endl;
      const pid_t pid = process.pid();
      running.emplace(pid, Running{std::move(process), set, std::chrono::steady_clock::now()});
    }
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      throw Error(ExitCode::kInternal, cat("waitpid: ", std::strerror(errno)));
    }
    const auto found = running.find(pid);
    if (found == running.end()) continue;  // not one of ours
    const ExitStatus exit_status = decode_wait_status(status);
    found->second.process.mark_reaped(exit_status);
    finish(found->second, exit_status);
    running.erase(found);
  }

  RunSummary summary;
  for (auto& [id, outcome] : outcomes) summary.outcomes.push_back(outcome);
  return summary;
}

}  // namespace pstrain::sweep
