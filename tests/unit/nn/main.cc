// test_nn's main: the same BLAS kernel choice as pstrain's own main (compute/cpu/blas_kernels.h), so that the
// pinned parameters (test_model_pins.cc) are checked with the kernels pstrain trains with; where that choice is
// Cooperlake, whose products round differently from the SkylakeX kernels the pins were recorded with, test_nn
// runs SkylakeX instead (the CPU has AVX-512 either way), so that the pins still guard the model code there. The
// threads are shared out as pstrain's trainers do (oneDNN's follow OpenBLAS's: one, from test_nn's environment).
#include <gtest/gtest.h>

#include <cstdlib>

#include "compute/cpu/blas_kernels.h"

int main(int argc, char** argv) {
  pstrain::compute::use_best_cpu_libraries(argv);
  if (std::getenv("OPENBLAS_CORETYPE") == nullptr && pstrain::compute::blas_kernel_family() == "Cooperlake") {
    pstrain::compute::restart_with_blas_coretype(argv, "SkylakeX", "Cooperlake");
  }
  pstrain::compute::share_blas_threads(1);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
