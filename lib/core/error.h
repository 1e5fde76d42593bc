#pragma once
// Two kinds of failure, written down once:
//  - pstrain::Error: something the user can cause or fix (bad flag, missing or corrupt file, unwritable
//    folder, diverged training). Carries an exit code and a message that names the problem.
//  - PSTRAIN_ASSERT: a broken invariant inside pstrain; prints both sides and the location.
#include <sstream>
#include <stdexcept>
#include <string>

namespace pstrain {

// Documented process exit codes (docs/outputs.md, "Exit codes").
enum class ExitCode : int {
  kOk = 0,
  kInternal = 1,     // a bug: broken invariant or unexpected library failure
  kUsage = 2,        // bad flag, value, or rank layout
  kInputData = 3,    // missing, corrupt or inconsistent input data or checkpoint
  kOutput = 4,       // output folder not writable, disk full
  kDiverged = 5,     // NaN or Inf loss during training
  kTimeout = 6,      // a rank stopped responding (watchdog, --timeout-seconds)
  kRunsFailed = 7,   // a tool that starts runs failed with them: pstrain-sweep run local (a set failed, each named),
                     // pstrain-elastic (the job failed more than --max-restarts times)
  kTooFewSlots = 8,  // pstrain-elastic: fewer than --min-np usable slots for --elastic-timeout seconds
  kDiscoveryFailed = 9,     // pstrain-elastic: the host discovery script failed, hung or printed garbage
  kMissingDependency = 10,  // a module the program needs is not installed (pstrain-plot: python3-matplotlib)
};
// One table for every program of the family (pstrain, pstrain-data, pstrain-sweep, pstrain-plot, pstrain-launch,
// pstrain-elastic): a code means the same wherever it comes from.

class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ExitCode code() const noexcept { return code_; }

 private:
  ExitCode code_;
};

// Concatenates anything streamable: cat("batch size ", n, " must be > 0").
template <typename... Parts>
std::string cat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

// An error every rank has already agreed on and whose message was already printed once: the job ends with its
// code on every rank without another message and without MPI_Abort.
class AgreedFailure : public Error {
 public:
  explicit AgreedFailure(ExitCode code) : Error(code, "already reported") {}
};

[[noreturn]] void fail_invariant(const char* expression, const std::string& detail, const char* file, int line);

}  // namespace pstrain

#define PSTRAIN_ASSERT(condition, ...)                                                                        \
  do {                                                                                                        \
    if (!(condition)) ::pstrain::fail_invariant(#condition, ::pstrain::cat(__VA_ARGS__), __FILE__, __LINE__); \
  } while (0)
