#include "compute/cuda/cuda_backend.h"

#include <algorithm>
#include <climits>

#include "compute/cuda/cuda_check.h"
#include "core/error.h"

namespace pstrain::compute::cuda {

namespace {

constexpr std::size_t kScratchAlignment = 256;
constexpr std::size_t kMinimumScratch = std::size_t{1} << 16;

std::size_t round_up(std::size_t bytes) {
  return (bytes + kScratchAlignment - 1) / kScratchAlignment * kScratchAlignment;
}

std::string describe_device(int device) {
  cudaDeviceProp properties{};
  CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
  return cat("cuda:", device, " (", properties.name, ")");
}

// True for page-locked host memory (cudaMallocHost, cudaHostRegister): a copy from it is a DMA the stream runs
// later, so the source must stay valid. Pageable memory (new, std::vector) gives cudaMemoryTypeUnregistered.
bool is_page_locked(const void* pointer) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, pointer) != cudaSuccess) {
    (void)cudaGetLastError();  // not an error for us: treat it as pageable
    return false;
  }
  return attributes.type == cudaMemoryTypeHost;
}

ActivationKind kind_of(Activation activation) {
  switch (activation) {
    case Activation::kRelu: return ActivationKind::kRelu;
    case Activation::kTanh: return ActivationKind::kTanh;
    case Activation::kSigmoid: return ActivationKind::kSigmoid;
  }
  PSTRAIN_ASSERT(false, "activation value ", static_cast<int>(activation), " is not an Activation");
}

// The device current before a noexcept release: switches to `device` without throwing.
void make_current_nothrow(int device) noexcept {
  int current = -1;
  if (cudaGetDevice(&current) != cudaSuccess || current != device) CUDA_CHECK_NOTHROW(cudaSetDevice(device));
}

ConvShape conv_shape(const ConvGeometry& g, int batch) {
  PSTRAIN_ASSERT(batch >= 0 && g.height > 0 && g.width > 0 && g.channels > 0 && g.kernel > 0 && g.stride > 0 &&
                     g.padding >= 0 && g.out_height() > 0 && g.out_width() > 0,
                 "convolution geometry ", g.height, "x", g.width, "x", g.channels, " kernel ", g.kernel, " stride ",
                 g.stride, " padding ", g.padding, " batch ", batch);
  return {g.height,  g.width,        g.channels,    g.kernel,        g.stride,
          g.padding, g.out_height(), g.out_width(), g.column_width()};
}

PoolShape pool_shape(const PoolGeometry& g, int batch) {
  // Windows lie inside the image (no padding): out_height() alone would round a too-small image up to 1.
  PSTRAIN_ASSERT(batch >= 0 && g.channels > 0 && g.window > 0 && g.stride > 0 && g.height >= g.window &&
                     g.width >= g.window,
                 "pooling geometry ", g.height, "x", g.width, "x", g.channels, " window ", g.window, " stride ",
                 g.stride, " batch ", batch);
  // argmax holds int32 indices into the whole batch.
  const std::int64_t input = std::int64_t{batch} * g.height * g.width * g.channels;
  PSTRAIN_ASSERT(input <= INT_MAX, "max pooling input of ", input, " elements exceeds int32 argmax indices");
  return {g.height, g.width, g.channels, g.window, g.stride, g.out_height(), g.out_width()};
}

}  // namespace

// --- RAII owners

Stream::Stream() {
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
}

Stream::~Stream() {
  if (stream_ != nullptr) CUDA_CHECK_NOTHROW(cudaStreamDestroy(stream_));
}

CublasHandle::CublasHandle(cudaStream_t stream) : api_(cublas_api()) {
  CUBLAS_CHECK(api_.create(&handle_));
  try {
    CUBLAS_CHECK(api_.set_stream(handle_, stream));
    // Full fp32 products: the default math mode never lowers fp32 to TF32, and alpha/beta are host values.
    CUBLAS_CHECK(api_.set_math_mode(handle_, CUBLAS_DEFAULT_MATH));
    CUBLAS_CHECK(api_.set_pointer_mode(handle_, CUBLAS_POINTER_MODE_HOST));
  } catch (...) {
    api_.destroy(handle_);
    throw;
  }
}

CublasHandle::~CublasHandle() {
  if (handle_ != nullptr) api_.destroy(handle_);  // fails only for an invalid handle; nothing to do about it here
}

DeviceScratch::~DeviceScratch() {
  if (data_ != nullptr) CUDA_CHECK_NOTHROW(cudaFree(data_));
}

void* DeviceScratch::reserve(std::size_t bytes, cudaStream_t stream) {
  if (bytes <= capacity_) return data_;
  const std::size_t grown = std::max({bytes, 2 * capacity_, kMinimumScratch});
  if (data_ != nullptr) {
    CUDA_CHECK(cudaStreamSynchronize(stream));  // queued kernels may still use the old region
    CUDA_CHECK(cudaFree(data_));
    data_ = nullptr;
    capacity_ = 0;
  }
  CUDA_CHECK(cudaMalloc(&data_, grown));
  capacity_ = grown;
  return data_;
}

PinnedLossTotals::PinnedLossTotals() {
  void* pointer = nullptr;
  CUDA_CHECK(cudaMallocHost(&pointer, sizeof(LossTotals)));
  totals_ = static_cast<LossTotals*>(pointer);
}

PinnedLossTotals::~PinnedLossTotals() {
  if (totals_ != nullptr) CUDA_CHECK_NOTHROW(cudaFreeHost(totals_));
}

// --- the backend

CudaBackend::CudaBackend(int device, GpuConvolutions convolutions)
    : device_(device),
      convolutions_(convolutions),
      name_(describe_device(device)),
      cublas_(stream_.get()),
      cudnn_(device, stream_.get()) {}

CudaBackend::~CudaBackend() {
  make_current_nothrow(device_);
  CUDA_CHECK_NOTHROW(cudaStreamSynchronize(stream()));
}

void CudaBackend::make_current() const {
  int current = -1;
  CUDA_CHECK(cudaGetDevice(&current));
  if (current != device_) CUDA_CHECK(cudaSetDevice(device_));
}

void* CudaBackend::allocate_bytes(std::size_t bytes) {
  make_current();
  // A zero-byte request still gets a real pointer: Buffer's "null means empty" holds for default buffers only.
  void* pointer = nullptr;
  const cudaError_t status = cudaMalloc(&pointer, std::max<std::size_t>(bytes, 1));
  if (status == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) (void)cudaGetLastError();
    throw Error(ExitCode::kInternal, cat("out of GPU memory on ", name_, " allocating ", bytes, " bytes (", free_bytes,
                                         " of ", total_bytes, " bytes free)"));
  }
  if (status != cudaSuccess) throw_cuda_error(status, "cudaMalloc", __FILE__, __LINE__);
  return pointer;
}

void CudaBackend::release_bytes(void* pointer) noexcept {
  if (pointer == nullptr) return;
  make_current_nothrow(device_);
  CUDA_CHECK_NOTHROW(cudaStreamSynchronize(stream()));
  CUDA_CHECK_NOTHROW(cudaFree(pointer));
}

void CudaBackend::copy_from_host(void* destination, const void* host_source, std::size_t bytes) {
  if (bytes == 0) return;
  make_current();
  CUDA_CHECK(cudaMemcpyAsync(destination, host_source, bytes, cudaMemcpyHostToDevice, stream()));
  // From pageable memory the driver may still be reading the source when cudaMemcpyAsync returns; wait, so
  // the caller can reuse it (a std::vector batch, say). From page-locked staging the copy stays queued.
  if (!is_page_locked(host_source)) CUDA_CHECK(cudaStreamSynchronize(stream()));
}

void CudaBackend::copy_to_host(void* host_destination, const void* source, std::size_t bytes) {
  if (bytes == 0) return;
  make_current();
  CUDA_CHECK(cudaMemcpyAsync(host_destination, source, bytes, cudaMemcpyDeviceToHost, stream()));
  CUDA_CHECK(cudaStreamSynchronize(stream()));
}

void CudaBackend::fill(float* data, std::size_t count, float value) {
  make_current();
  launch_fill(stream(), data, count, value);
}

void CudaBackend::gemm_strided(bool transpose_a, bool transpose_b, int m, int n, int k, float alpha, const float* a,
                               int lda, const float* b, int ldb, float beta, float* c, int ldc) {
  PSTRAIN_ASSERT(m >= 0 && n >= 0 && k >= 0 && ldc >= n, "gemm sizes m=", m, " n=", n, " k=", k, " ldc=", ldc);
  if (m == 0 || n == 0) return;
  make_current();
  if (k == 0) {
    // cuBLAS rejects a leading dimension of 0; the empty product leaves c = beta * c (beta 0 overwrites).
    PSTRAIN_ASSERT(ldc == n, "an empty product into part of a wider matrix (ldc ", ldc, ", n ", n, ")");
    const std::size_t count = static_cast<std::size_t>(m) * static_cast<std::size_t>(n);
    if (beta == 0.0f) {
      launch_fill(stream(), c, count, 0.0f);
    } else if (beta != 1.0f) {
      launch_scale(stream(), c, count, beta);
    }
    return;
  }
  // cuBLAS is column-major, and a row-major matrix read column-major is its transpose. So the row-major
  // C = op(A) op(B) (m x n) is computed as the column-major C^T = op(B)^T op(A)^T (n x m): B first, A second,
  // each with its own transpose flag and its stored (row-major) row length as leading dimension.
  CUBLAS_CHECK(cublas_.api().sgemm(cublas_.get(), transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                                   transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &alpha, b, ldb, a, lda, &beta, c,
                                   ldc));
}

void CudaBackend::add_row_bias(float* y, const float* bias, int rows, int cols) {
  PSTRAIN_ASSERT(rows >= 0 && cols >= 0, "add_row_bias rows=", rows, " cols=", cols);
  make_current();
  launch_add_row_bias(stream(), y, bias, rows, cols);
}

void CudaBackend::sum_rows(const float* x, float* out, int rows, int cols, float beta) {
  PSTRAIN_ASSERT(rows >= 0 && cols >= 0, "sum_rows rows=", rows, " cols=", cols);
  make_current();
  const std::size_t partial_floats = sum_rows_scratch_floats(rows, cols);
  float* partial =
      partial_floats == 0 ? nullptr : static_cast<float*>(scratch_.reserve(partial_floats * sizeof(float), stream()));
  launch_sum_rows(stream(), x, out, rows, cols, beta, partial);
}

void CudaBackend::activation_forward(Activation activation, const float* x, float* y, std::size_t count) {
  make_current();
  launch_activation_forward(stream(), kind_of(activation), x, y, count);
}

void CudaBackend::activation_backward(Activation activation, const float* y, const float* dy, float* dx,
                                      std::size_t count) {
  make_current();
  launch_activation_backward(stream(), kind_of(activation), y, dy, dx, count);
}

Backend::LossResult CudaBackend::softmax_cross_entropy(const float* logits, const std::int32_t* labels, float* dlogits,
                                                       int rows, int classes, float label_smoothing) {
  PSTRAIN_ASSERT(rows >= 0 && classes > 0, "softmax_cross_entropy rows=", rows, " classes=", classes);
  if (rows == 0) return {};
  make_current();
  // Scratch: the totals, then one double (loss) and one int (outcome) per row.
  const std::size_t totals_bytes = round_up(sizeof(LossTotals));
  const std::size_t loss_bytes = round_up(static_cast<std::size_t>(rows) * sizeof(double));
  auto* base = static_cast<char*>(
      scratch_.reserve(totals_bytes + loss_bytes + static_cast<std::size_t>(rows) * sizeof(int), stream()));
  auto* totals = reinterpret_cast<LossTotals*>(base);
  auto* row_loss = reinterpret_cast<double*>(base + totals_bytes);
  auto* row_outcome = reinterpret_cast<int*>(base + totals_bytes + loss_bytes);
  launch_softmax_cross_entropy(stream(), logits, labels, dlogits, rows, classes, label_smoothing, row_loss, row_outcome,
                               totals);
  // One small copy back; the caller needs the numbers now, so this is a synchronisation point.
  LossTotals* host = host_totals_.get();
  CUDA_CHECK(cudaMemcpyAsync(host, totals, sizeof(LossTotals), cudaMemcpyDeviceToHost, stream()));
  CUDA_CHECK(cudaStreamSynchronize(stream()));
  if (host->first_bad_row >= 0) {
    throw Error(ExitCode::kInputData, cat("label ", host->first_bad_label, " is outside [0, ", classes, ")"));
  }
  return {host->loss_sum, static_cast<std::size_t>(host->correct)};
}

void CudaBackend::scale(float* data, std::size_t count, float factor) {
  make_current();
  launch_scale(stream(), data, count, factor);
}

void CudaBackend::im2col(const float* x, float* columns, const ConvGeometry& geometry, int batch) {
  const ConvShape shape = conv_shape(geometry, batch);
  make_current();
  launch_im2col(stream(), x, columns, shape, batch);
}

void CudaBackend::col2im(const float* columns, float* dx, const ConvGeometry& geometry, int batch) {
  const ConvShape shape = conv_shape(geometry, batch);
  make_current();
  launch_col2im(stream(), columns, dx, shape, batch);
}

std::unique_ptr<ConvolutionKernel> CudaBackend::make_convolution(const ConvGeometry& geometry, int filters,
                                                                 int max_batch) {
  (void)conv_shape(geometry, max_batch);  // the same geometry checks as im2col's
  if (convolutions_ == GpuConvolutions::kIm2colGemm) return nullptr;
  make_current();
  return cudnn_.make(*this, geometry, filters, max_batch);
}

void CudaBackend::max_pool_forward(const float* x, float* y, std::int32_t* argmax, const PoolGeometry& geometry,
                                   int batch) {
  const PoolShape shape = pool_shape(geometry, batch);
  make_current();
  launch_max_pool_forward(stream(), x, y, argmax, shape, batch);
}

void CudaBackend::max_pool_backward(const float* dy, const std::int32_t* argmax, float* dx,
                                    const PoolGeometry& geometry, int batch) {
  const PoolShape shape = pool_shape(geometry, batch);
  make_current();
  launch_max_pool_backward(stream(), dy, argmax, dx, shape, batch);
}

void CudaBackend::copy(void* destination, const void* source, std::size_t bytes) {
  if (bytes == 0) return;
  make_current();
  CUDA_CHECK(cudaMemcpyAsync(destination, source, bytes, cudaMemcpyDeviceToDevice, stream()));
}

void CudaBackend::axpy(float alpha, const float* x, float* y, std::size_t count) {
  make_current();
  launch_axpy(stream(), alpha, x, y, count);
}

void CudaBackend::add(const float* a, const float* b, float* out, std::size_t count) {
  make_current();
  launch_add(stream(), a, b, out, count);
}

void CudaBackend::multiply(const float* a, const float* b, float* out, std::size_t count) {
  make_current();
  launch_multiply(stream(), a, b, out, count);
}

void CudaBackend::copy_columns(const float* source, int source_stride, float* destination, int destination_stride,
                               int rows, int cols) {
  PSTRAIN_ASSERT(rows >= 0 && cols >= 0 && cols <= source_stride && cols <= destination_stride, "copy_columns ", rows,
                 " x ", cols, " between strides ", source_stride, " and ", destination_stride);
  if (rows == 0 || cols == 0) return;
  make_current();
  CUDA_CHECK(cudaMemcpy2DAsync(destination, static_cast<std::size_t>(destination_stride) * sizeof(float), source,
                               static_cast<std::size_t>(source_stride) * sizeof(float),
                               static_cast<std::size_t>(cols) * sizeof(float), static_cast<std::size_t>(rows),
                               cudaMemcpyDeviceToDevice, stream()));
}

void CudaBackend::avg_pool_forward(const float* x, float* y, const PoolGeometry& geometry, int batch) {
  const PoolShape shape = pool_shape(geometry, batch);
  make_current();
  launch_avg_pool_forward(stream(), x, y, shape, batch);
}

void CudaBackend::avg_pool_backward(const float* dy, float* dx, const PoolGeometry& geometry, int batch) {
  const PoolShape shape = pool_shape(geometry, batch);
  make_current();
  launch_avg_pool_backward(stream(), dy, dx, shape, batch);
}

void CudaBackend::spatial_mean(const float* x, float* y, int batch, int pixels, int channels) {
  make_current();
  launch_spatial_mean(stream(), x, y, batch, pixels, channels);
}

void CudaBackend::spatial_mean_backward(const float* dy, float* dx, int batch, int pixels, int channels) {
  make_current();
  launch_spatial_mean_backward(stream(), dy, dx, batch, pixels, channels);
}

namespace {
BatchNormPointers pointers_of(const Backend::BatchNormTensors& t) {
  return {t.gamma, t.beta, t.running_mean, t.running_var, t.batch_mean, t.batch_inv_std};
}
}  // namespace

void CudaBackend::batch_norm_training(const float* x, float* y, const BatchNormTensors& tensors, float momentum,
                                      float epsilon, int rows, int channels) {
  make_current();
  launch_batch_norm_training(stream(), x, y, pointers_of(tensors), momentum, epsilon, rows, channels);
}

void CudaBackend::batch_norm_inference(const float* x, float* y, const BatchNormTensors& tensors, float epsilon,
                                       int rows, int channels) {
  make_current();
  launch_batch_norm_inference(stream(), x, y, pointers_of(tensors), epsilon, rows, channels);
}

void CudaBackend::batch_norm_backward(const float* x, const float* dy, const BatchNormTensors& tensors, float* dx,
                                      float* dgamma, float* dbeta, int rows, int channels) {
  make_current();
  launch_batch_norm_backward(stream(), x, dy, pointers_of(tensors), dx, dgamma, dbeta, rows, channels);
}

void CudaBackend::dropout_mask(float* mask, std::size_t count, float rate, std::uint64_t key) {
  make_current();
  launch_dropout_mask(stream(), mask, count, rate, key);
}

void CudaBackend::gather_rows(const float* table, const float* ids, float* out, int count, int dim, int table_rows) {
  if (count <= 0 || dim <= 0) return;
  make_current();
  auto* bad_ids = static_cast<int*>(scratch_.reserve(sizeof(int), stream()));
  CUDA_CHECK(cudaMemsetAsync(bad_ids, 0, sizeof(int), stream()));
  launch_gather_rows(stream(), table, ids, out, count, dim, table_rows, bad_ids);
  int bad = 0;
  CUDA_CHECK(cudaMemcpyAsync(&bad, bad_ids, sizeof(int), cudaMemcpyDeviceToHost, stream()));
  CUDA_CHECK(cudaStreamSynchronize(stream()));
  if (bad > 0) {
    throw Error(ExitCode::kInputData, cat(bad, " embedding id(s) are not integers in [0, ", table_rows, ")"));
  }
}

void CudaBackend::scatter_add_rows(const float* row_gradients, const float* ids, float* table_gradient, int count,
                                   int dim, int table_rows) {
  make_current();
  launch_scatter_add_rows(stream(), row_gradients, ids, table_gradient, count, dim, table_rows);
}

void* CudaBackend::allocate_host_staging(std::size_t bytes) {
  make_current();
  void* pointer = nullptr;
  CUDA_CHECK(cudaMallocHost(&pointer, std::max<std::size_t>(bytes, 1)));
  return pointer;
}

void CudaBackend::release_host_staging(void* pointer) noexcept {
  if (pointer == nullptr) return;
  make_current_nothrow(device_);
  CUDA_CHECK_NOTHROW(cudaStreamSynchronize(stream()));  // a queued copy may still read it
  CUDA_CHECK_NOTHROW(cudaFreeHost(pointer));
}

void CudaBackend::synchronize() {
  make_current();
  CUDA_CHECK(cudaStreamSynchronize(stream()));
}

void CudaBackend::mark_step(StepPoint point) {
  make_current();
  timeline_.mark(point, stream());
}

std::string CudaBackend::take_step_breakdown() {
  make_current();
  return timeline_.take_breakdown();
}

}  // namespace pstrain::compute::cuda
