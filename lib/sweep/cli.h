#pragma once
// pstrain-sweep's command line: subcommands grid, random, emit k8s, emit slurm, run local, run-one, report.
#include <ostream>

namespace pstrain::sweep {

// Exit code of `run local` when one or more sets failed (0-5 keep pstrain's meanings).
constexpr int kSetsFailedExitCode = 6;

// Returns the exit code; throws pstrain::Error for bad input (the main prints "pstrain-sweep: error: ...").
int run_cli(int argc, const char* const* argv, std::ostream& out);

}  // namespace pstrain::sweep
