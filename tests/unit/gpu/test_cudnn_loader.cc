// The cuDNN loader (compute/cuda/cudnn_api.h) on this machine, with or without a GPU: it finds a cuDNN 9 where one
// is installed (the build machine's /usr/local/cuda has one) and names the file and version it loaded, or says why
// there is none; the GPU backend then keeps im2col + cuBLAS. Built only where the build has cuDNN support.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "compute/cuda/cudnn_api.h"

namespace pstrain::compute::cuda {
namespace {

TEST(CudnnLoaderTest, LoadsACudnnOfTheBuildsMajorVersionOrSaysWhyNot) {
  const CudnnApi* api = cudnn_api();
  const std::string description = cudnn_description();
  ASSERT_EQ(description.rfind("cuDNN", 0), 0u) << description;
  if (api == nullptr) {
    EXPECT_NE(description.find("none"), std::string::npos) << description;
    GTEST_SKIP() << description;
  }
  EXPECT_EQ(api->version / 10000, static_cast<std::size_t>(CUDNN_MAJOR));
  EXPECT_EQ(api->get_version(), api->version);
  EXPECT_TRUE(std::filesystem::exists(api->path)) << api->path;
  EXPECT_NE(description.find(api->path), std::string::npos) << description;
  EXPECT_STREQ(api->error_string(CUDNN_STATUS_SUCCESS), "CUDNN_STATUS_SUCCESS");
  EXPECT_EQ(cudnn_api(), api);  // loaded once
}

}  // namespace
}  // namespace pstrain::compute::cuda
