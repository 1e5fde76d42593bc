#include "sweep/process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "core/error.h"

extern char** environ;

namespace pstrain::sweep {

std::string ExitStatus::describe() const {
  return signal != 0 ? cat("killed by signal ", signal) : cat("exit ", code);
}

ExitStatus decode_wait_status(int status) {
  if (WIFSIGNALED(status)) return {128 + WTERMSIG(status), WTERMSIG(status)};
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 1, 0};
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::optional<std::filesystem::path>& log) {
  std::vector<char*> pointers;
  for (const auto& word : argv) pointers.push_back(const_cast<char*>(word.c_str()));
  pointers.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  if (log) {
    // Appended: a set run again (resumed) keeps the log of its earlier attempt above the new one.
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log->c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  }
  const int result = posix_spawnp(&pid_, pointers[0], &actions, nullptr, pointers.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  // Almost always a wrong path given by the user (--pstrain, --mpirun), hence a usage error.
  if (result != 0) throw Error(ExitCode::kUsage, cat("cannot start ", argv[0], ": ", std::strerror(result)));
  running_ = true;
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept : pid_(other.pid_), running_(other.running_) {
  other.running_ = false;
}

ChildProcess::~ChildProcess() {
  if (!running_) return;
  ::kill(pid_, SIGTERM);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

ExitStatus ChildProcess::wait() {
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0) {
    if (errno != EINTR) throw Error(ExitCode::kInternal, cat("waitpid(", pid_, "): ", std::strerror(errno)));
  }
  running_ = false;
  return decode_wait_status(status);
}

void ChildProcess::mark_reaped(ExitStatus) {
  running_ = false;
}

}  // namespace pstrain::sweep
