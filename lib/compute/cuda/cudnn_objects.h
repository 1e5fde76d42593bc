#pragma once
// RAII owners of cuDNN's handle and descriptors. Movable (a convolution keeps its per-batch descriptors in a map);
// destructors never throw: a failed destroy only means an invalid object, and there is nothing to do about it.
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <utility>

#include "compute/cuda/cudnn_api.h"
#include "compute/cuda/cudnn_check.h"

namespace pstrain::compute::cuda {

template <typename Handle, auto Create, auto Destroy>
class CudnnObject {
 public:
  explicit CudnnObject(const CudnnApi& api) : api_(&api) { CUDNN_CHECK((api.*Create)(&handle_)); }
  ~CudnnObject() {
    if (handle_ != nullptr) (api_->*Destroy)(handle_);
  }
  CudnnObject(CudnnObject&& other) noexcept : api_(other.api_), handle_(std::exchange(other.handle_, nullptr)) {}
  CudnnObject& operator=(CudnnObject&& other) noexcept {
    std::swap(api_, other.api_);
    std::swap(handle_, other.handle_);
    return *this;
  }
  CudnnObject(const CudnnObject&) = delete;
  CudnnObject& operator=(const CudnnObject&) = delete;
  Handle get() const { return handle_; }

 private:
  const CudnnApi* api_;
  Handle handle_ = nullptr;
};

using CudnnHandle = CudnnObject<cudnnHandle_t, &CudnnApi::create, &CudnnApi::destroy>;
using TensorDescriptor = CudnnObject<cudnnTensorDescriptor_t, &CudnnApi::create_tensor, &CudnnApi::destroy_tensor>;
using FilterDescriptor = CudnnObject<cudnnFilterDescriptor_t, &CudnnApi::create_filter, &CudnnApi::destroy_filter>;
using ConvolutionDescriptor =
    CudnnObject<cudnnConvolutionDescriptor_t, &CudnnApi::create_convolution, &CudnnApi::destroy_convolution>;

}  // namespace pstrain::compute::cuda
