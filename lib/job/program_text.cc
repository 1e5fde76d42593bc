#include "job/program_text.h"

#include <mpi.h>

#include <sstream>

#include "compute/backend.h"
#include "compute/cpu/blas_kernels.h"
#include "core/options.h"

namespace pstrain::job {

std::string usage_text(const boost::program_options::options_description& user_options) {
  std::ostringstream text;
  text << "Usage: mpirun -np N pstrain --data-dir DIR --output-dir DIR [options]\n"
          "       pstrain evaluate PASS_FOLDER [--split test|valid]    test metrics of a saved model\n"
          "       pstrain predict PASS_FOLDER --input (SHARD.h5|X.npy) --output FILE\n"
          "       pstrain export --onnx MODEL.onnx PASS_FOLDER          the model as ONNX\n"
          "       pstrain --help | --version      (evaluate, predict, export: COMMAND --help)\n"
          "Ranks [0, P) are parameter-server shards, the others trainers; one rank trains alone.\n"
          "With --mode allreduce there are no servers: every rank is a trainer.\n"
          "Every flag can also be set as PSTRAIN_<FLAG> (upper case, '-' -> '_') or in --config FILE;\n"
          "the command line wins over the environment, which wins over the file.\n\n"
       << general_options() << "\n"
       << user_options << "\n"
       << "Examples:\n"
          "  pstrain --data-dir data/fashion-mnist --output-dir runs/local --passes 3\n"
          "      train the MLP on one process\n"
          "  mpirun -np 3 pstrain --data-dir data/fashion-mnist --output-dir runs/a --num-pservers 1 --passes 10\n"
          "      1 parameter-server shard + 2 trainers, sync SGD\n"
          "  mpirun -np 4 pstrain --data-dir data/fashion-mnist --output-dir runs/b --mode async --dispatch dynamic\n"
          "      async SGD, slow trainers take fewer chunks of samples\n"
          "  mpirun -np 3 pstrain --data-dir data/fashion-mnist --output-dir runs/a --resume auto --passes 20\n"
          "      continue runs/a from its newest checkpoint (with the flags of runs/a/config.ini)\n"
          "  pstrain --config runs/a/config.ini --output-dir runs/c\n"
          "      a new run with the flags of an earlier one\n";
  return text.str();
}

std::string version_text() {
  char mpi[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(mpi, &length);
  std::string mpi_line(mpi, static_cast<std::size_t>(length));
  mpi_line = mpi_line.substr(0, mpi_line.find_first_of("\n,"));
  std::ostringstream text;
  text << "pstrain " << PSTRAIN_VERSION << "\n"
       << "  built with: " << PSTRAIN_BUILD_DESCRIPTION << "\n"
       << "  MPI: " << mpi_line << "\n"
       << "  CPU BLAS: " << compute::blas_kernels_description() << "\n"
       << "  GPUs visible: " << compute::gpu_count() << "\n";
  return text.str();
}

}  // namespace pstrain::job
