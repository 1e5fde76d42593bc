#pragma once
// Which cuDNN algorithms a convolution runs, chosen the same way on every run of a given shape, GPU and cuDNN
// version, so that a sync run gives the same bits every time:
//  - the candidates and their order are cuDNN's heuristic (cudnnGetConvolution*Algorithm_v7), which predicts from
//    the shape and the GPU and never times anything (cudnnFind*, which times, is not used: its winner can change
//    from run to run with the machine's load);
//  - the first candidate that cuDNN supports for the shape, is CUDNN_DETERMINISTIC (for backward data and
//    backward filter this excludes the algorithms that sum with atomics, such as backward filter ALGO_0 and
//    ALGO_3), runs in fp32 FMA math (the descriptor asks for CUDNN_FMA_MATH: no TF32, as cuBLAS runs without
//    it), and needs at most kCudnnWorkspaceLimit of workspace is taken;
//  - where one of the three has no such candidate, the layer keeps im2col + gemm.
#include <cudnn.h>

#include <cstddef>
#include <optional>
#include <string>

#include "compute/cuda/cudnn_api.h"

namespace pstrain::compute::cuda {

// The most workspace one convolution call may use. One workspace serves every layer of a backend (they run one
// after another on its stream), so this also bounds the backend's whole cuDNN workspace. 256 MiB is ~0.2% of an
// H200 and more than the implicit-GEMM algorithms ask for the built-in models at batch 1024.
inline constexpr std::size_t kCudnnWorkspaceLimit = std::size_t{256} << 20;

struct ConvolutionAlgorithms {
  cudnnConvolutionFwdAlgo_t forward{};
  cudnnConvolutionBwdDataAlgo_t backward_data{};
  cudnnConvolutionBwdFilterAlgo_t backward_filter{};
  std::size_t workspace_bytes = 0;  // the largest of the three
};

struct ConvolutionDescriptors {
  cudnnHandle_t handle;
  cudnnTensorDescriptor_t x;
  cudnnFilterDescriptor_t weight;
  cudnnConvolutionDescriptor_t convolution;
  cudnnTensorDescriptor_t y;
};

// The algorithms for one shape, or nullopt with `why_not` naming the direction that has no acceptable one.
std::optional<ConvolutionAlgorithms> choose_algorithms(const CudnnApi& api, const ConvolutionDescriptors& descriptors,
                                                       std::string& why_not);

// "fwd IMPLICIT_PRECOMP_GEMM, bwd-data ALGO_1, bwd-filter ALGO_1, workspace 0.1 MiB".
std::string describe(const ConvolutionAlgorithms& algorithms);

}  // namespace pstrain::compute::cuda
