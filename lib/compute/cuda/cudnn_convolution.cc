#include "compute/cuda/cudnn_convolution.h"

#include <map>
#include <optional>
#include <string>

#include "compute/cuda/cuda_backend.h"
#include "compute/cuda/cuda_check.h"
#include "compute/cuda/cudnn_algorithms.h"
#include "compute/cuda/cudnn_objects.h"
#include "core/error.h"
#include "core/log.h"

namespace pstrain::compute::cuda {

struct CudnnConvolutions::Session {
  Session(const CudnnApi& api, cudaStream_t stream) : api(api), handle(api), stream(stream) {
    CUDNN_CHECK(api.set_stream(handle.get(), stream));
  }
  void* workspace(std::size_t bytes) { return bytes == 0 ? nullptr : scratch.reserve(bytes, stream); }

  const CudnnApi& api;
  CudnnHandle handle;
  DeviceScratch scratch;  // grows to the largest workspace a chosen algorithm needs (<= kCudnnWorkspaceLimit)
  cudaStream_t stream;
};

namespace {

// The descriptors and algorithms of one batch size (a pass's last batch may be smaller than the others).
struct BatchPlan {
  TensorDescriptor x;
  TensorDescriptor y;
  ConvolutionAlgorithms algorithms;
};

void make_current(int device) {
  int current = -1;
  CUDA_CHECK(cudaGetDevice(&current));
  if (current != device) CUDA_CHECK(cudaSetDevice(device));
}

class CudnnConvolution final : public ConvolutionKernel {
 public:
  CudnnConvolution(CudnnConvolutions::Session& session, Backend& backend, int device, const ConvGeometry& geometry,
                   int filters)
      : session_(session),
        api_(session.api),
        backend_(backend),
        device_(device),
        geometry_(geometry),
        filters_(filters),
        weight_(api_),
        convolution_(api_) {
    CUDNN_CHECK(api_.set_filter_4d(weight_.get(), CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, filters, geometry.channels,
                                   geometry.kernel, geometry.kernel));
    CUDNN_CHECK(api_.set_convolution_2d(convolution_.get(), geometry.padding, geometry.padding, geometry.stride,
                                        geometry.stride, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    // FMA only: with the default math cuDNN may run fp32 convolutions in TF32 on Ampere and later.
    CUDNN_CHECK(api_.set_math_type(convolution_.get(), CUDNN_FMA_MATH));
  }

  // The plan for `batch`, made on first use. Where cuDNN has no acceptable algorithm: null with the reason in
  // `why_not`, or Error(kInternal) when the caller passed no `why_not` (a batch size after the kernel was accepted).
  const BatchPlan* plan(int batch, std::string* why_not = nullptr) {
    if (auto found = plans_.find(batch); found != plans_.end()) return &found->second;
    TensorDescriptor x(api_), y(api_);
    CUDNN_CHECK(api_.set_tensor_4d(x.get(), CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, batch, geometry_.channels,
                                   geometry_.height, geometry_.width));
    int n = 0, c = 0, h = 0, w = 0;
    CUDNN_CHECK(api_.forward_output_dim(convolution_.get(), x.get(), weight_.get(), &n, &c, &h, &w));
    PSTRAIN_ASSERT(n == batch && c == filters_ && h == geometry_.out_height() && w == geometry_.out_width(),
                   "cuDNN's output ", n, "x", h, "x", w, "x", c, " is not pstrain's ", batch, "x",
                   geometry_.out_height(), "x", geometry_.out_width(), "x", filters_);
    CUDNN_CHECK(api_.set_tensor_4d(y.get(), CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, n, c, h, w));
    std::string reason;
    const auto algorithms =
        choose_algorithms(api_, {session_.handle.get(), x.get(), weight_.get(), convolution_.get(), y.get()}, reason);
    if (!algorithms) {
      if (why_not == nullptr) {
        throw Error(ExitCode::kInternal,
                    cat("the cuDNN convolution made for its largest batch has no algorithm at batch ", batch, ": ",
                        reason));
      }
      *why_not = reason;
      return nullptr;
    }
    return &plans_.emplace(batch, BatchPlan{std::move(x), std::move(y), *algorithms}).first->second;
  }

  std::string description() const override {
    const std::size_t v = api_.version;
    return cat("cuDNN ", v / 10000, ".", v / 100 % 100, " (", describe(plans_.rbegin()->second.algorithms), ")");
  }

  void forward(const float* x, const float* weight, const float* bias, float* y, int batch) override {
    make_current(device_);
    const BatchPlan& p = *plan(batch);
    const float one = 1.0f, zero = 0.0f;
    void* workspace = session_.workspace(p.algorithms.workspace_bytes);
    CUDNN_CHECK(api_.forward(session_.handle.get(), &one, p.x.get(), x, weight_.get(), weight, convolution_.get(),
                             p.algorithms.forward, workspace, p.algorithms.workspace_bytes, &zero, p.y.get(), y));
    if (bias != nullptr) backend_.add_row_bias(y, bias, rows(batch), filters_);
  }

  void backward(const float* x, const float* dy, const float* weight, float* dweight, float* dbias, float* dx,
                int batch) override {
    make_current(device_);
    const BatchPlan& p = *plan(batch);
    const float one = 1.0f, zero = 0.0f;  // beta 0: the gradients are overwritten, as the contract says
    void* workspace = session_.workspace(p.algorithms.workspace_bytes);
    CUDNN_CHECK(api_.backward_filter(session_.handle.get(), &one, p.x.get(), x, p.y.get(), dy, convolution_.get(),
                                     p.algorithms.backward_filter, workspace, p.algorithms.workspace_bytes, &zero,
                                     weight_.get(), dweight));
    if (dbias != nullptr) backend_.sum_rows(dy, dbias, rows(batch), filters_, 0.0f);
    if (dx == nullptr) return;
    CUDNN_CHECK(api_.backward_data(session_.handle.get(), &one, weight_.get(), weight, p.y.get(), dy,
                                   convolution_.get(), p.algorithms.backward_data, workspace,
                                   p.algorithms.workspace_bytes, &zero, p.x.get(), dx));
  }

 private:
  int rows(int batch) const { return batch * geometry_.out_height() * geometry_.out_width(); }

  CudnnConvolutions::Session& session_;
  const CudnnApi& api_;
  Backend& backend_;
  int device_;
  ConvGeometry geometry_;
  int filters_;
  FilterDescriptor weight_;
  ConvolutionDescriptor convolution_;
  std::map<int, BatchPlan> plans_;
};

}  // namespace

CudnnConvolutions::CudnnConvolutions(int device, cudaStream_t stream) : device_(device), stream_(stream) {}

CudnnConvolutions::~CudnnConvolutions() = default;

std::unique_ptr<ConvolutionKernel> CudnnConvolutions::make(Backend& backend, const ConvGeometry& geometry, int filters,
                                                           int max_batch) {
  if (unavailable_) return nullptr;
  if (!session_) {
    const CudnnApi* api = cudnn_api();
    if (api == nullptr) {
      unavailable_ = true;
      return nullptr;
    }
    try {
      make_current(device_);
      session_ = std::make_unique<Session>(*api, stream_);
    } catch (const Error& failure) {  // a cuDNN that loads but does not start here (driver, CUDA version)
      log_warning(cudnn_description(), " does not start: ", failure.what(), "; convolutions run as im2col + gemm");
      unavailable_ = true;
      return nullptr;
    }
  }
  make_current(device_);
  auto kernel = std::make_unique<CudnnConvolution>(*session_, backend, device_, geometry, filters);
  std::string why_not;
  if (kernel->plan(max_batch, &why_not) == nullptr) {
    log_info("a ", geometry.height, "x", geometry.width, "x", geometry.channels, " convolution with ", filters,
             " filters runs as im2col + gemm: ", why_not);
    return nullptr;
  }
  return kernel;
}

}  // namespace pstrain::compute::cuda
