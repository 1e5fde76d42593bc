#pragma once
// What the pstrain program does with its command line, shared by its main (no run hooks) and by programs that
// run the same trainer with their own hooks (run_common/run_hooks.h), such as the test suite's pstrain-faults.
#include "run_common/run_hooks.h"

namespace pstrain {

// First thing in main: may re-execute the program so that OpenBLAS loads the CPU's widest kernels, and makes a
// file-size limit (ulimit -f) give a write error that can be reported instead of killing the rank.
void prepare_process(char** argv);

// `pstrain evaluate|predict|export ...`, or the training job with `hooks`. Returns the exit code; an error is
// reported as "pstrain: error: ..." with its exit code.
int run_program(int argc, char** argv, run_common::RunHooks& hooks);

}  // namespace pstrain
