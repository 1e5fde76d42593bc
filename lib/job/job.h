#pragma once
// The whole pstrain job on one rank: configuration, validation agreed by every rank, role, training.
#include "run_common/run_hooks.h"

namespace pstrain::job {

// Returns the process exit code. Errors found before training starts are agreed on by every rank (one message,
// the same non-zero code everywhere); errors during training end the job through MPI_Abort.
int run_job(int argc, char** argv);
// The same, calling the program's `hooks` at their points of the run (run_common/run_hooks.h); they outlive the job.
int run_job(int argc, char** argv, run_common::RunHooks& hooks);

}  // namespace pstrain::job
