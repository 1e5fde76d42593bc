#pragma once
// A child process in a process group of its own, owned by one object: stdin from /dev/null, stdout and stderr
// into a pipe the driver reads (or inherited). Whatever happens to the owner, the child's whole group is ended
// and the child reaped: nothing is left running. Signals the driver catches or ignores are back to their defaults
// in the child, and the child gets SIGTERM if the driver dies, even by SIGKILL (PR_SET_PDEATHSIG): mpirun then
// ends its ranks. fork + exec rather than posix_spawn for that one call.
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "launch/fd.h"

namespace pstrain::launch {

struct ExitStatus {
  int code = 0;    // exit code, or 128 + signal as a shell reports it
  int signal = 0;  // non-zero when killed by a signal
  std::string describe() const;
};

class Process {
 public:
  // argv[0] is looked up in PATH when it has no '/'. Throws DriverError(kUsage) naming the program when it
  // cannot be started.
  Process(const std::vector<std::string>& argv, bool capture_output);
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  int output_fd() const { return output_.get(); }  // -1 when not captured
  void close_output() { output_.reset(); }
  bool running() const { return running_; }
  // Reaps the child if it has ended (does not block).
  std::optional<ExitStatus> poll_exit();
  void signal(int number) const;        // to the child alone (mpirun forwards SIGUSR1 to its ranks)
  void signal_group(int number) const;  // to its whole process group
  // SIGTERM to the group, up to grace_s seconds to end, then SIGKILL to the group; reaps the child.
  ExitStatus terminate(double grace_s);

 private:
  pid_t pid_ = -1;
  bool running_ = false;
  UniqueFd output_;
};

// Makes this process the reaper of its orphaned descendants (Linux PR_SET_CHILD_SUBREAPER), so that ranks whose
// mpirun died are re-parented here and end_orphans() can find them.
void become_subreaper();
// SIGKILLs and reaps every remaining child of this process (re-parented orphans included); returns those that
// were still running ("pstrain (pid 123)"), not those that had already ended.
std::vector<std::string> end_orphans();

}  // namespace pstrain::launch
