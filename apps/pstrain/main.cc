// pstrain: the distributed trainer. Thin main: everything lives in lib/job/job.cc.
#include <csignal>
#include <cstring>
#include <iostream>

#include "compute/cpu/blas_kernels.h"
#include "core/error.h"
#include "export/export_command.h"
#include "inference/commands.h"
#include "job/job.h"

int main(int argc, char** argv) {
  // Before anything else: may re-execute this program so that OpenBLAS loads the CPU's widest kernels.
  pstrain::compute::use_best_cpu_libraries(argv);
  // A file-size limit (ulimit -f) must give a write error we can report, not kill the rank.
  std::signal(SIGXFSZ, SIG_IGN);
  try {
    // After training: `pstrain evaluate|predict|export ...` use a saved pass folder, without MPI (evaluate started
    // by mpirun initialises it and shares the work among the ranks: inference/evaluate_on_ranks.h).
    if (argc > 1 && std::strcmp(argv[1], "evaluate") == 0) return pstrain::inference::run_evaluate(argc - 1, argv + 1);
    if (argc > 1 && std::strcmp(argv[1], "predict") == 0) return pstrain::inference::run_predict(argc - 1, argv + 1);
    if (argc > 1 && std::strcmp(argv[1], "export") == 0) return pstrain::exporting::run_export(argc - 1, argv + 1);
    return pstrain::train::run_job(argc, argv);
  } catch (const pstrain::Error& error) {
    std::cerr << "pstrain: error: " << error.what() << std::endl;
    return static_cast<int>(error.code());
  } catch (const std::exception& error) {
    std::cerr << "pstrain: internal error: " << error.what() << std::endl;
    return static_cast<int>(pstrain::ExitCode::kInternal);
  }
}
