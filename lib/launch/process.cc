#include "launch/process.h"

#include <fcntl.h>
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

namespace pstrain::launch {

namespace {

ExitStatus decode(int status) {
  if (WIFSIGNALED(status)) return {128 + WTERMSIG(status), WTERMSIG(status)};
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 1, 0};
}

// In the child between fork and exec (async-signal-safe calls only): its own process group, the signals the driver
// catches or ignores back to their defaults (an ignored SIGPIPE would survive exec), SIGTERM when the driver dies
// (even by SIGKILL: then mpirun ends its ranks instead of running on unwatched), stdin from /dev/null, stdout and
// stderr to `output` when given. An exec failure is reported through `report` as errno.
[[noreturn]] void become_child(char* const* argv, pid_t parent, int output, int report) {
  ::setpgid(0, 0);
  for (const int number : {SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2, SIGCHLD}) std::signal(number, SIG_DFL);
  sigset_t empty;
  sigemptyset(&empty);
  ::sigprocmask(SIG_SETMASK, &empty, nullptr);
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != parent) ::_exit(127);  // the driver died before the line above
  const int null = ::open("/dev/null", O_RDONLY);
  if (null >= 0) ::dup2(null, STDIN_FILENO);
  if (output >= 0) {
    ::dup2(output, STDOUT_FILENO);
    ::dup2(output, STDERR_FILENO);
  }
  ::execvp(argv[0], argv);
  const int error = errno;
  [[maybe_unused]] const ssize_t written = ::write(report, &error, sizeof error);
  ::_exit(127);
}

}  // namespace

std::string ExitStatus::describe() const {
  return signal != 0 ? cat("killed by signal ", signal) : cat("exit ", code);
}

Process::Process(const std::vector<std::string>& argv, bool capture_output) {
  std::vector<char*> pointers;
  pointers.reserve(argv.size() + 1);
  for (const auto& word : argv) pointers.push_back(const_cast<char*>(word.c_str()));
  pointers.push_back(nullptr);
  Pipe output;
  if (capture_output) output = make_pipe();
  Pipe report = make_pipe();  // close-on-exec: end of file on it means the exec succeeded
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) throw DriverError(DriverExit::kInternal, cat("fork: ", std::strerror(errno)));
  if (pid_ == 0) become_child(pointers.data(), parent, output.write.get(), report.write.get());
  ::setpgid(pid_, pid_);  // also here: signals to the group must work before the child runs
  running_ = true;
  report.write.reset();
  int error = 0;
  ssize_t got = 0;
  do {
    ::fcntl(report.read.get(), F_SETFL, 0);  // blocking: the child execs or reports at once
    got = ::read(report.read.get(), &error, sizeof error);
  } while (got < 0 && errno == EINTR);
  if (got == static_cast<ssize_t>(sizeof error)) {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    running_ = false;
    // Almost always a wrong path given by the user (MPIRUN, PSTRAIN_BIN), hence a usage error.
    throw DriverError(DriverExit::kUsage, cat("cannot start ", argv[0], ": ", std::strerror(error)));
  }
  output_ = std::move(output.read);  // the write end closes here: end of file once the child and its heirs exit
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
