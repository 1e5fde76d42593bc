#pragma once
// The whole pstrain job on one rank: configuration, validation agreed by every rank, role, training.
namespace pstrain::train {

// Returns the process exit code. Errors found before training starts are agreed on by every rank (one message,
// the same non-zero code everywhere); errors during training end the job through MPI_Abort.
int run_job(int argc, char** argv);

}  // namespace pstrain::train
