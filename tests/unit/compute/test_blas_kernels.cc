// When pstrain asks OpenBLAS for wider kernels than the library chose on its own.
#include <gtest/gtest.h>

#include "compute/cpu/blas_kernels.h"

namespace pstrain::compute {
namespace {

TEST(BlasKernels, AvxTwoKernelsOnAnAvx512CpuAreReplacedBySkylakeX) {
  EXPECT_EQ(better_blas_coretype("Haswell", true), "SkylakeX");
  EXPECT_EQ(better_blas_coretype("Zen", true), "SkylakeX");
  EXPECT_EQ(better_blas_coretype("Prescott", true), "SkylakeX");
}

TEST(BlasKernels, Avx512KernelsAreKeptWhateverTheSpelling) {
  EXPECT_EQ(better_blas_coretype("SkylakeX", true), "");
  EXPECT_EQ(better_blas_coretype("cooperlake", true), "");
  EXPECT_EQ(better_blas_coretype("SAPPHIRERAPIDS", true), "");
}

TEST(BlasKernels, NothingChangesOnACpuWithoutAvx512) {
  EXPECT_EQ(better_blas_coretype("Haswell", false), "");
  EXPECT_EQ(better_blas_coretype("Zen", false), "");
}

TEST(OpenMpSpin, IdleThreadsSpinBrieflyUnlessTheUserChoseHowTheyWait) {
  EXPECT_EQ(openmp_spin_count(nullptr, nullptr), "1000");
  EXPECT_EQ(openmp_spin_count("active", nullptr), "");
  EXPECT_EQ(openmp_spin_count("passive", nullptr), "");
  EXPECT_EQ(openmp_spin_count(nullptr, "300000"), "");
  EXPECT_EQ(openmp_spin_count("", nullptr), "");
}

}  // namespace
}  // namespace pstrain::compute
