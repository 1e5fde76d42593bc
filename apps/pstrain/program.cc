#include "pstrain/program.h"

#include <csignal>
#include <cstring>
#include <iostream>

#include "compute/cpu/blas_kernels.h"
#include "core/error.h"
#include "export/export_command.h"
#include "inference/commands.h"
#include "job/job.h"

namespace pstrain {

void prepare_process(char** argv) {
  compute::use_best_cpu_libraries(argv);
  std::signal(SIGXFSZ, SIG_IGN);
}

int run_program(int argc, char** argv, run_common::RunHooks& hooks) {
  try {
    // After training: `pstrain evaluate|predict|export ...` use a saved pass folder, without MPI (evaluate started
    // by mpirun initialises it and shares the work among the ranks: inference/evaluate_on_ranks.h).
    if (argc > 1 && std::strcmp(argv[1], "evaluate") == 0) return inference::run_evaluate(argc - 1, argv + 1);
    if (argc > 1 && std::strcmp(argv[1], "predict") == 0) return inference::run_predict(argc - 1, argv + 1);
    if (argc > 1 && std::strcmp(argv[1], "export") == 0) return exporting::run_export(argc - 1, argv + 1);
    return job::run_job(argc, argv, hooks);
  } catch (const Error& error) {
    std::cerr << "pstrain: error: " << error.what() << std::endl;
    return static_cast<int>(error.code());
  } catch (const std::exception& error) {
    std::cerr << "pstrain: internal error: " << error.what() << std::endl;
    return static_cast<int>(ExitCode::kInternal);
  }
}

}  // namespace pstrain
