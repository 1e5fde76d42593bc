#pragma once
// pstrain-sweep's command line: subcommands grid, random, emit k8s, emit slurm, run local, run-one, report.
#include <ostream>

#include "core/error.h"

namespace pstrain::sweep {

// Exit code of `run local` when one or more sets failed (core/error.h: the family's one table of codes).
constexpr int kSetsFailedExitCode = static_cast<int>(ExitCode::kRunsFailed);

// Returns the exit code; throws pstrain::Error for bad input (the main prints "pstrain-sweep: error: ...").
int run_cli(int argc, const char* const* argv, std::ostream& out);

}  // namespace pstrain::sweep
