// GPU discovery: runs in every build. Asking for a GPU that is not there is a usage error naming the problem,
// whether the build has no CUDA, the machine has no GPU, or the ordinal is past the last device.
#include <gtest/gtest.h>

#include <string>

#include "compute/backend.h"
#include "core/error.h"

namespace pstrain::compute {
namespace {

void expect_usage_error(int ordinal) {
  try {
    auto backend = make_gpu_backend(ordinal);
    ADD_FAILURE() << "make_gpu_backend(" << ordinal << ") returned " << backend->name();
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ExitCode::kUsage) << error.what();
    EXPECT_NE(std::string(error.what()).find("GPU " + std::to_string(ordinal)), std::string::npos) << error.what();
  }
}

TEST(GpuDevicesTest, CountIsZeroWithoutCuda) {
  EXPECT_GE(gpu_count(), 0);
#ifdef PSTRAIN_HAVE_CUDA
  EXPECT_TRUE(built_with_cuda());
#else
  EXPECT_FALSE(built_with_cuda());
  EXPECT_EQ(gpu_count(), 0);
#endif
}

TEST(GpuDevicesTest, OrdinalPastTheLastGpuIsAUsageError) {
  // gpu_count() == 0 (no CUDA, no driver, no device): GPU 0 is already past the last one.
  expect_usage_error(gpu_count());
}

TEST(GpuDevicesTest, NegativeOrdinalIsAUsageError) {
  expect_usage_error(-1);
}

}  // namespace
}  // namespace pstrain::compute
