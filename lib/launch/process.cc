#include "launch/process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/error.h"
#include "launch/exit_codes.h"

extern char** environ;

namespace pstrain::launch {

namespace {

ExitStatus decode(int status) {
  if (WIFSIGNALED(status)) return {128 + WTERMSIG(status), WTERMSIG(status)};
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 1, 0};
}

// posix_spawn attributes: a new process group, an empty signal mask, and default handling of the signals the
// driver catches or ignores (an ignored SIGPIPE would otherwise survive exec).
struct SpawnAttributes {
  posix_spawnattr_t attributes;
  SpawnAttributes() {
    posix_spawnattr_init(&attributes);
    sigset_t defaults, empty;
    sigemptyset(&empty);
    sigemptyset(&defaults);
    for (const int number : {SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2, SIGCHLD}) sigaddset(&defaults, number);
    posix_spawnattr_setsigdefault(&attributes, &defaults);
    posix_spawnattr_setsigmask(&attributes, &empty);
    posix_spawnattr_setpgroup(&attributes, 0);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  }
  ~SpawnAttributes() { posix_spawnattr_destroy(&attributes); }
};

struct FileActions {
  posix_spawn_file_actions_t actions;
  FileActions() { posix_spawn_file_actions_init(&actions); }
  ~FileActions() { posix_spawn_file_actions_destroy(&actions); }
};

}  // namespace

std::string ExitStatus::describe() const {
  return signal != 0 ? cat("killed by signal ", signal) : cat("exit ", code);
}

Process::Process(const std::vector<std::string>& argv, bool capture_output) {
  std::vector<char*> pointers;
  pointers.reserve(argv.size() + 1);
  for (const auto& word : argv) pointers.push_back(const_cast<char*>(word.c_str()));
  pointers.push_back(nullptr);
  FileActions files;
  posix_spawn_file_actions_addopen(&files.actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  Pipe pipe;
  if (capture_output) {
    pipe = make_pipe();
    posix_spawn_file_actions_adddup2(&files.actions, pipe.write.get(), STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&files.actions, pipe.write.get(), STDERR_FILENO);
  }
  SpawnAttributes attributes;
  const int result = posix_spawnp(&pid_, pointers[0], &files.actions, &attributes.attributes, pointers.data(), environ);
  if (result != 0) throw DriverError(DriverExit::kUsage, cat("cannot start ", argv[0], ": ", std::strerror(result)));
  running_ = true;
  output_ = std::move(pipe.read);  // the write end closes here: end of file once the child and its heirs exit
}

Process::~Process() {
  if (running_) terminate(5.0);
}

std::optional<ExitStatus> Process::poll_exit() {
  if (!running_) return std::nullopt;
  int status = 0;
  const pid_t done = ::waitpid(pid_, &status, WNOHANG);
  if (done != pid_) return std::nullopt;
  running_ = false;
  return decode(status);
}

void Process::signal(int number) const {
  if (running_) ::kill(pid_, number);
}

void Process::signal_group(int number) const {
  if (running_) ::kill(-pid_, number);
}

ExitStatus Process::terminate(double grace_s) {
  signal_group(SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_s);
  while (std::chrono::steady_clock::now() < deadline) {
    if (const auto status = poll_exit()) {
      ::kill(-pid_, SIGKILL);  // anything left in its group
      return *status;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(-pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  running_ = false;
  return decode(status);
}

void become_subreaper() {
  ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}

std::vector<std::string> end_orphans() {
  std::vector<std::string> ended;
  const std::string me = std::to_string(::getpid());
  for (int round = 0; round < 10; ++round) {
    int found = 0;
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
      const std::string name = entry.path().filename();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      std::ifstream stat(entry.path() / "stat");
      std::string line;
      if (!std::getline(stat, line)) continue;
      // pid (comm) state ppid ...: comm may hold spaces, so read after the last ')'.
      const auto open = line.find('(');
      const auto close = line.rfind(')');
      if (open == std::string::npos || close == std::string::npos) continue;
      std::istringstream rest(line.substr(close + 1));
      std::string state, ppid;
      rest >> state >> ppid;
      if (ppid != me) continue;
      const pid_t child = std::stoi(name);
      ::kill(child, SIGKILL);
      int status = 0;
      ::waitpid(child, &status, 0);
      ++found;
      // A zombie had already ended: only reaped here, not worth a word.
      if (state != "Z") ended.push_back(cat(line.substr(open + 1, close - open - 1), " (pid ", child, ")"));
    }
    if (found == 0) break;
  }
  return ended;
}

}  // namespace pstrain::launch
