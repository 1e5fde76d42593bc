#include "launch/discovery.h"

#include <unistd.h>

#include "core/error.h"
#include "launch/exit_codes.h"

namespace pstrain::launch {

namespace {
constexpr std::size_t kMaxOutput = 1 << 20;  // a host list is small; more than this is garbage
}  // namespace

void check_discovery_script(const std::filesystem::path& script) {
  std::error_code error;
  if (!std::filesystem::exists(script, error)) {
    throw DriverError(DriverExit::kUsage, cat("host discovery script '", script.string(), "' does not exist"));
  }
  if (!std::filesystem::is_regular_file(script, error)) {
    throw DriverError(DriverExit::kUsage, cat("host discovery script '", script.string(), "' is not a file"));
  }
  if (::access(script.c_str(), X_OK) != 0) {
    throw DriverError(DriverExit::kUsage,
                      cat("host discovery script '", script.string(), "' is not executable (chmod +x it)"));
  }
}

DiscoveryRun::DiscoveryRun(const std::filesystem::path& script, double now, double timeout_s)
    : script_(script), deadline_(now + timeout_s), timeout_s_(timeout_s) {
  try {
    process_ = std::make_unique<Process>(std::vector<std::string>{script.string()}, /*capture_output=*/true);
  } catch (const DriverError& error) {  // removed or made unexecutable since the check
    failed_to_start_ = DiscoveryResult{std::nullopt, error.what()};
  }
}

std::optional<DiscoveryResult> DiscoveryRun::advance(double now) {
  if (failed_to_start_) return failed_to_start_;
  if (!eof_) {
    std::vector<std::string> lines;
    eof_ = !reader_.read_from(process_->output_fd(), lines);
    for (const std::string& line : lines) text_ += line + "\n";
    if (eof_) text_ += reader_.take_rest();
    if (text_.size() > kMaxOutput) {
      process_->terminate(1.0);
      return DiscoveryResult{std::nullopt, cat("host discovery script '", script_.string(), "' printed more than ",
                                               kMaxOutput, " bytes")};
    }
  }
  if (eof_) {
    if (const auto status = process_->poll_exit()) return finish(*status);
  }
  if (now >= deadline_) {
    process_->terminate(1.0);
    return DiscoveryResult{std::nullopt, cat("host discovery script '", script_.string(), "' did not finish within ",
                                             timeout_s_, " s (--discovery-timeout); it was ended")};
  }
  return std::nullopt;
}

DiscoveryResult DiscoveryRun::finish(const ExitStatus& status) {
  if (status.code != 0) {
    return {std::nullopt, cat("host discovery script '", script_.string(), "' failed (", status.describe(), ")")};
  }
  try {
    return {parse_host_list(text_), ""};
  } catch (const DriverError& error) {
    return {std::nullopt, cat(script_.string(), ": ", error.what())};
  }
}

}  // namespace pstrain::launch
