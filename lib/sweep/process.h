#pragma once
// A child process started with posix_spawnp (no shell, so no quoting problems) and owned by one object: if the
// owner goes away while the child still runs (an exception, an early return), the child is terminated and reaped
// rather than left behind as an orphan or a zombie.
#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace pstrain::sweep {

struct ExitStatus {
  int code = 0;    // exit code, or 128 + signal as a shell reports it
  int signal = 0;  // non-zero when killed by a signal
  bool ok() const { return code == 0 && signal == 0; }
  std::string describe() const;  // "exit 2" / "signal 9"
};

class ChildProcess {
 public:
  // argv[0] is looked up in PATH when it has no '/'. With `log`, stdout and stderr go to that file (truncated);
  // otherwise they are inherited. Throws Error(kUsage) naming the program when it cannot be started.
  ChildProcess(const std::vector<std::string>& argv, const std::optional<std::filesystem::path>& log);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&&) = delete;

  pid_t pid() const { return pid_; }
  ExitStatus wait();                    // blocks until it ends
  void mark_reaped(ExitStatus status);  // after a waitpid(-1) elsewhere returned this pid

 private:
  pid_t pid_ = -1;
  bool running_ = false;
};

ExitStatus decode_wait_status(int status);

}  // namespace pstrain::sweep
