#pragma once
// One run of the host-discovery script, watched without blocking the driver: its stdout is read as it comes, and
// a script that does not finish within the timeout is ended with its whole process group. Its stderr is the
// driver's (the user sees why a script failed).
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "launch/fd.h"
#include "launch/host_list.h"
#include "launch/process.h"

namespace pstrain::launch {

struct DiscoveryResult {
  std::optional<HostList> hosts;  // none: failed
  std::string error;              // why it failed, naming the script
};

class DiscoveryRun {
 public:
  DiscoveryRun(const std::filesystem::path& script, double now, double timeout_s);
  // What to poll: its stdout until end of file (after that, waiting for its exit is a matter of time).
  int fd() const { return process_ && !eof_ ? process_->output_fd() : -1; }
  // Reads what arrived; returns the result once the script has exited (or failed to start, or timed out).
  std::optional<DiscoveryResult> advance(double now);

 private:
  DiscoveryResult finish(const ExitStatus& status);

  std::filesystem::path script_;
  double deadline_;
  double timeout_s_;
  std::unique_ptr<Process> process_;
  std::optional<DiscoveryResult> failed_to_start_;
  LineReader reader_;
  std::string text_;
  bool eof_ = false;
};

// Checks before the first run that the script can be run at all: exists, is a file, is executable.
// Throws DriverError(kUsage) naming the problem.
void check_discovery_script(const std::filesystem::path& script);

}  // namespace pstrain::launch
