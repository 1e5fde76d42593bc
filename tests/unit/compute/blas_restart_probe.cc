// Checks the re-execution behind use_best_cpu_libraries() end to end: `blas_restart_probe CORETYPE` restarts
// itself with OPENBLAS_CORETYPE=CORETYPE and, in the new image, checks that OpenBLAS loaded those kernels, that
// the process kept its PID (what mpirun and srun rely on), its name (/proc/self/comm: what ps, pkill and the
// recovery tests look for) and its arguments, and that the log line says who chose.
// `blas_restart_probe CORETYPE MARKER mpi`, started by mpirun, also joins the job after the restart.
#include <cblas.h>
#include <mpi.h>
#include <unistd.h>

#include <strings.h>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

#include "compute/cpu/blas_kernels.h"

namespace {

std::string process_name() {
  std::ifstream comm("/proc/self/comm");
  std::string name;
  std::getline(comm, name);
  return name;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    std::cerr << "usage: blas_restart_probe CORETYPE MARKER [mpi]\n";
    return 2;
  }
  const char* pid_before = std::getenv("BLAS_RESTART_PROBE_PID");
  if (pid_before == nullptr) {
    ::setenv("BLAS_RESTART_PROBE_PID", std::to_string(::getpid()).c_str(), 1);
    ::setenv("BLAS_RESTART_PROBE_NAME", process_name().c_str(), 1);
    pstrain::compute::restart_with_blas_coretype(argv, argv[1], openblas_get_corename());
    std::cerr << "FAIL: the exec returned\n";
    return 1;
  }
  const std::string description = pstrain::compute::blas_kernels_description();
  std::cout << description << "\n";
  bool ok = true;
  if (strcasecmp(openblas_get_corename(), argv[1]) != 0) {
    std::cerr << "FAIL: OpenBLAS runs " << openblas_get_corename() << " kernels, not " << argv[1] << "\n";
    ok = false;
  }
  if (std::to_string(::getpid()) != pid_before) {
    std::cerr << "FAIL: the PID changed from " << pid_before << " to " << ::getpid() << "\n";
    ok = false;
  }
  if (const char* name_before = std::getenv("BLAS_RESTART_PROBE_NAME"); process_name() != name_before) {
    std::cerr << "FAIL: the process was called " << name_before << ", now " << process_name() << "\n";
    ok = false;
  }
  if (std::string(argv[2]) != "marker-argument") {
    std::cerr << "FAIL: the arguments changed\n";
    ok = false;
  }
  if (description.find("selected by pstrain") == std::string::npos) {
    std::cerr << "FAIL: the description does not say pstrain chose the kernels\n";
    ok = false;
  }
  if (argc == 4) {
    // The restarted image must still be the process mpirun started: MPI_Init finds its place in the job.
    MPI_Init(&argc, &argv);
    int size = 0;
    int ranks = 0;
    const int one = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(&one, &ranks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    if (size < 2 || ranks != size) {
      std::cerr << "FAIL: the job has " << size << " ranks, " << ranks << " answered\n";
      ok = false;
    }
  }
  return ok ? 0 : 1;
}
