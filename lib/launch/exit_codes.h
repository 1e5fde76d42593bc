#pragma once
// pstrain-elastic's exit codes (documented in lib/launch/README.md). Codes 2-5 are also what pstrain itself
// uses (bad flag, bad input data, output not writable, diverged); the driver passes a job's own verdict through
// unchanged, since relaunching would end the same way. Every code is the family's (core/error.h, one table).
#include <stdexcept>
#include <string>

#include "core/error.h"

namespace pstrain::launch {

enum class DriverExit : int {
  kOk = 0,                 // training finished, or stopped cleanly (a checkpoint) on a signal to the driver
  kInternal = 1,           // a bug in the driver
  kUsage = 2,              // bad driver flag, --min-np > --max-np, no --output-dir, discovery script missing
  kOutput = 4,             // the output folder cannot be written (elastic.jsonl)
  kNotEnoughSlots = static_cast<int>(ExitCode::kTooFewSlots),  // fewer than --min-np usable slots for --elastic-timeout s
  kRestartsExhausted = static_cast<int>(ExitCode::kRunsFailed),  // the job failed more than --max-restarts times
  // The discovery script failed, hung or printed garbage (at start, or for --elastic-timeout).
  kDiscoveryFailed = static_cast<int>(ExitCode::kDiscoveryFailed),
};

// An expected failure of the driver: the message names the problem and what to do.
class DriverError : public std::runtime_error {
 public:
  DriverError(DriverExit code, const std::string& message) : std::runtime_error(message), code_(code) {}
  DriverExit code() const noexcept { return code_; }

 private:
  DriverExit code_;
};

}  // namespace pstrain::launch
