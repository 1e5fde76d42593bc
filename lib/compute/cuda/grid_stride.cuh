#pragma once
// The launch shape every element-wise kernel of the CUDA backend uses (kernels.cu, layer_kernels.cu): a
// grid-stride loop over 64-bit indices with kThreads threads per block and at most kMaxBlocks blocks.
#include <cuda_runtime.h>

#include <cstdint>

namespace pstrain::compute::cuda {

constexpr int kThreads = 256;
constexpr std::int64_t kMaxBlocks = std::int64_t{1} << 16;

inline unsigned blocks_for(std::int64_t count) {
  const std::int64_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks);
}

__device__ inline std::int64_t first_index() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline std::int64_t grid_stride() {
  return static_cast<std::int64_t>(gridDim.x) * blockDim.x;
}

}  // namespace pstrain::compute::cuda
