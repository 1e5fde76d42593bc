#include "compute/cuda/cudnn_algorithms.h"

#include <algorithm>
#include <vector>

#include "compute/cuda/cudnn_check.h"
#include "core/error.h"

namespace pstrain::compute::cuda {

namespace {

// The three perf structs share their fields (algo, status, memory, determinism, mathType).
template <typename Perf>
bool acceptable(const Perf& perf) {
  return perf.status == CUDNN_STATUS_SUCCESS && perf.determinism == CUDNN_DETERMINISTIC &&
         perf.memory <= kCudnnWorkspaceLimit &&
         (perf.mathType == CUDNN_FMA_MATH || perf.mathType == CUDNN_DEFAULT_MATH);
}

// `query(requested, &returned, results)` fills cuDNN's ranking; the first acceptable entry in that order.
template <typename Perf, typename Query>
std::optional<Perf> first_acceptable(int count, Query query) {
  std::vector<Perf> ranking(static_cast<std::size_t>(count));
  int returned = 0;
  CUDNN_CHECK(query(count, &returned, ranking.data()));
  for (int i = 0; i < returned; ++i) {
    if (acceptable(ranking[static_cast<std::size_t>(i)])) return ranking[static_cast<std::size_t>(i)];
  }
  return std::nullopt;
}

const char* name_of(cudnnConvolutionFwdAlgo_t algorithm) {
  switch (algorithm) {
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM: return "IMPLICIT_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM: return "IMPLICIT_PRECOMP_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_GEMM: return "GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT: return "DIRECT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT: return "FFT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING: return "FFT_TILING";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD: return "WINOGRAD";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED: return "WINOGRAD_NONFUSED";
    default: return "?";
  }
}

const char* name_of(cudnnConvolutionBwdDataAlgo_t algorithm) {
  switch (algorithm) {
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_0: return "ALGO_0";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_1: return "ALGO_1";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT: return "FFT";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING: return "FFT_TILING";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD: return "WINOGRAD";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED: return "WINOGRAD_NONFUSED";
    default: return "?";
  }
}

const char* name_of(cudnnConvolutionBwdFilterAlgo_t algorithm) {
  switch (algorithm) {
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0: return "ALGO_0";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1: return "ALGO_1";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT: return "FFT";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3: return "ALGO_3";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED: return "WINOGRAD_NONFUSED";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING: return "FFT_TILING";
    default: return "?";
  }
}

}  // namespace

std::optional<ConvolutionAlgorithms> choose_algorithms(const CudnnApi& api, const ConvolutionDescriptors& d,
                                                       std::string& why_not) {
  const auto forward =
      first_acceptable<cudnnConvolutionFwdAlgoPerf_t>(CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                      [&](int requested, int* returned,
                                                          cudnnConvolutionFwdAlgoPerf_t* results) {
                                                        return api.forward_algorithms(d.handle, d.x, d.weight,
                                                                                      d.convolution, d.y, requested,
                                                                                      returned, results);
                                                      });
  const auto backward_data =
      first_acceptable<cudnnConvolutionBwdDataAlgoPerf_t>(CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
                                                          [&](int requested, int* returned,
                                                              cudnnConvolutionBwdDataAlgoPerf_t* results) {
                                                            return api.backward_data_algorithms(d.handle, d.weight, d.y,
                                                                                                d.convolution, d.x,
                                                                                                requested, returned,
                                                                                                results);
                                                          });
  const auto backward_filter =
      first_acceptable<cudnnConvolutionBwdFilterAlgoPerf_t>(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
                                                            [&](int requested, int* returned,
                                                                cudnnConvolutionBwdFilterAlgoPerf_t* results) {
                                                              return api.backward_filter_algorithms(d.handle, d.x, d.y,
                                                                                                    d.convolution,
                                                                                                    d.weight, requested,
                                                                                                    returned, results);
                                                            });
  const char* missing = !forward           ? "forward"
                        : !backward_data   ? "backward data"
                        : !backward_filter ? "backward filter"
                                           : nullptr;
  if (missing != nullptr) {
    why_not = cat("cuDNN offers no deterministic fp32 ", missing, " algorithm within ", kCudnnWorkspaceLimit >> 20,
                  " MiB of workspace");
    return std::nullopt;
  }
  return ConvolutionAlgorithms{forward->algo, backward_data->algo, backward_filter->algo,
                               std::max({forward->memory, backward_data->memory, backward_filter->memory})};
}

std::string describe(const ConvolutionAlgorithms& algorithms) {
  return cat("fwd ", name_of(algorithms.forward), ", bwd-data ", name_of(algorithms.backward_data), ", bwd-filter ",
             name_of(algorithms.backward_filter), ", workspace ",
             static_cast<double>(algorithms.workspace_bytes) / (1 << 20), " MiB");
}

}  // namespace pstrain::compute::cuda
