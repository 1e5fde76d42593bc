// test_nn's main: the same BLAS kernel choice as pstrain's own main (compute/cpu/blas_kernels.h), so that the
// pinned parameters (test_model_pins.cc) are checked with the kernels pstrain trains with.
#include <gtest/gtest.h>

#include "compute/cpu/blas_kernels.h"

int main(int argc, char** argv) {
  pstrain::compute::use_best_blas_kernels(argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
