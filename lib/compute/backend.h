#pragma once
// The compute layer. Model code calls a Backend and never knows where its memory lives: on the CPU backend
// buffers are host memory, on a CUDA backend they will be device memory. Host data enters and leaves only
// through copy_from_host / copy_to_host.
//
// All matrices are row-major. Every operation is synchronous from the caller's point of view on the CPU
// backend; a CUDA backend may queue work on its stream, and copy_to_host synchronises.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace pstrain::compute {

enum class Activation { kRelu, kTanh, kSigmoid };

// Images are channels-last (NHWC): sample n, row y, column x, channel c lives at ((n*H + y)*W + x)*C + c. A
// convolution is then ONE matrix product over the whole batch (im2col rows are output pixels), its output is
// already NHWC, and its bias is a row bias: the dense-layer operations serve convolutions unchanged.
struct ConvGeometry {
  int height = 0, width = 0, channels = 0;  // input
  int kernel = 3;                           // square kernel
  int stride = 1;
  int padding = 1;  // zeros on every side
  int out_height() const { return (height + 2 * padding - kernel) / stride + 1; }
  int out_width() const { return (width + 2 * padding - kernel) / stride + 1; }
  int column_width() const { return kernel * kernel * channels; }  // one im2col row: (ky, kx, c), c fastest
};

struct PoolGeometry {
  int height = 0, width = 0, channels = 0;  // input
  int window = 2;
  int stride = 2;
  int out_height() const { return (height - window) / stride + 1; }
  int out_width() const { return (width - window) / stride + 1; }
};

Activation parse_activation(const std::string& name);  // throws pstrain::Error(kUsage)
std::string to_string(Activation activation);

// A convolution that a backend runs with its own kernels instead of im2col + one matrix product (the CPU backend:
// oneDNN's convolution primitives, where pstrain was built with oneDNN). Made for one geometry and filter count,
// for batches of up to max_batch; the layouts are pstrain's: x and y NHWC, the weight {filters, k, k, C}.
class ConvolutionKernel {
 public:
  virtual ~ConvolutionKernel() = default;
  // Which implementation runs, for the log ("oneDNN winograd (jit_wino_4x3:avx512_core)").
  virtual std::string description() const = 0;
  // y = conv(x, weight) + bias; bias may be null.
  virtual void forward(const float* x, const float* weight, const float* bias, float* y, int batch) = 0;
  // Overwrites dweight, dbias (when not null) and dx (when not null: the layer's input needs no gradient).
  virtual void backward(const float* x, const float* dy, const float* weight, float* dweight, float* dbias, float* dx,
                        int batch) = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // True when buffers are ordinary host memory (the CPU backend): callers may then read and write them in
  // place instead of copying through copy_to_host / copy_from_host.
  virtual bool host_accessible() const { return false; }

  // Memory (floats and int32 labels), owned through Buffer below.
  virtual void* allocate_bytes(std::size_t bytes) = 0;
  virtual void release_bytes(void* pointer) noexcept = 0;
  virtual void copy_from_host(void* destination, const void* host_source, std::size_t bytes) = 0;
  virtual void copy_to_host(void* host_destination, const void* source, std::size_t bytes) = 0;
  virtual void fill(float* data, std::size_t count, float value) = 0;

  // c = alpha * op(a) * op(b) + beta * c; op(a) is m x k, op(b) is k x n, c is m x n.
  void gemm(bool transpose_a, bool transpose_b, int m, int n, int k, float alpha, const float* a, const float* b,
            float beta, float* c) {
    gemm_strided(transpose_a, transpose_b, m, n, k, alpha, a, transpose_a ? m : k, b, transpose_b ? k : n, beta, c, n);
  }
  // The same on matrices that are parts of wider ones: lda, ldb and ldc are the lengths of the stored rows of a,
  // b and c (row-major, as stored: before any transpose), at least their widths.
  virtual void gemm_strided(bool transpose_a, bool transpose_b, int m, int n, int k, float alpha, const float* a,
                            int lda, const float* b, int ldb, float beta, float* c, int ldc) = 0;
  // y[r, :] += bias for every row r of a rows x cols matrix.
  virtual void add_row_bias(float* y, const float* bias, int rows, int cols) = 0;
  // out[c] = beta * out[c] + sum_r x[r, c]  (bias gradients).
  virtual void sum_rows(const float* x, float* out, int rows, int cols, float beta) = 0;

  virtual void activation_forward(Activation activation, const float* x, float* y, std::size_t count) = 0;
  // dx = dy * f'(x), written in terms of the forward output y.
  virtual void activation_backward(Activation activation, const float* y, const float* dy, float* dx,
                                   std::size_t count) = 0;

  // Softmax cross-entropy over rows x classes logits with int32 labels.
  // Returns the SUM of per-sample losses and the number of rows whose arg-max equals the label.
  // If dlogits is not null it receives d(mean loss)/d(logits), i.e. (softmax - onehot) / rows.
  struct LossResult {
    double loss_sum = 0;
    std::size_t correct = 0;
  };
  // With label_smoothing e > 0 the target is (1 - e) onehot + e / classes (PyTorch's label_smoothing): the
  // loss is the cross-entropy against that target and dlogits = (softmax - target) / rows.
  virtual LossResult softmax_cross_entropy(const float* logits, const std::int32_t* labels, float* dlogits, int rows,
                                           int classes, float label_smoothing) = 0;

  // data[i] *= factor.
  virtual void scale(float* data, std::size_t count, float factor) = 0;
  // Backend memory to backend memory (the two ranges do not overlap).
  virtual void copy(void* destination, const void* source, std::size_t bytes) = 0;
  // y[i] += alpha * x[i].
  virtual void axpy(float alpha, const float* x, float* y, std::size_t count) = 0;
  // out[i] = a[i] + b[i] (out may be a or b): a sum of two layers' outputs in one pass, with the bits of
  // copy-then-axpy(1.0f).
  virtual void add(const float* a, const float* b, float* out, std::size_t count) = 0;
  // out[i] = a[i] * b[i] (out may be a or b).
  virtual void multiply(const float* a, const float* b, float* out, std::size_t count) = 0;
  // A block of `cols` columns of `rows` rows from a matrix with rows of `source_stride` floats into one with
  // rows of `destination_stride` (the caller offsets both pointers to the block's first column): channel
  // concatenation and its adjoint.
  virtual void copy_columns(const float* source, int source_stride, float* destination, int destination_stride,
                            int rows, int cols) = 0;

  // im2col for NHWC input x (batch x H x W x C): columns is (batch * out_h * out_w) x column_width(), row
  // (n, oy, ox) holding the kernel window at that output pixel in (ky, kx, c) order, zeros where it hangs over
  // the padding.
  virtual void im2col(const float* x, float* columns, const ConvGeometry& geometry, int batch) = 0;
  // The adjoint of im2col: OVERWRITES dx (batch x H x W x C) with the sum of every column entry that im2col
  // copied from each input element.
  virtual void col2im(const float* columns, float* dx, const ConvGeometry& geometry, int batch) = 0;
  // A kernel of the backend's own for this convolution, or null: the layer then runs im2col + gemm.
  virtual std::unique_ptr<ConvolutionKernel> make_convolution(const ConvGeometry& /*geometry*/, int /*filters*/,
                                                              int /*max_batch*/) {
    return nullptr;
  }

  // Max pooling over NHWC input, per channel. y is batch x out_h x out_w x C; argmax[i] is the index into x
  // (counting from x itself, over the whole batch) of the element y[i] was taken from (the first maximum in
  // window order on ties).
  virtual void max_pool_forward(const float* x, float* y, std::int32_t* argmax, const PoolGeometry& geometry,
                                int batch) = 0;
  // OVERWRITES dx (batch x H x W x C): zero everywhere, plus dy[i] at argmax[i] (summed if windows overlap).
  virtual void max_pool_backward(const float* dy, const std::int32_t* argmax, float* dx, const PoolGeometry& geometry,
                                 int batch) = 0;

  // Average pooling over NHWC input, per channel, every window fully inside the image (no padding).
  virtual void avg_pool_forward(const float* x, float* y, const PoolGeometry& geometry, int batch) = 0;
  // OVERWRITES dx: each input element receives dy / window^2 from every window that covers it.
  virtual void avg_pool_backward(const float* dy, float* dx, const PoolGeometry& geometry, int batch) = 0;
  // Global average pooling: x is batch x pixels x channels, y batch x channels, y[n, c] = mean over pixels.
  virtual void spatial_mean(const float* x, float* y, int batch, int pixels, int channels) = 0;
  // OVERWRITES dx with dy[n, c] / pixels at every pixel.
  virtual void spatial_mean_backward(const float* dy, float* dx, int batch, int pixels, int channels) = 0;

  // Batch normalisation over a rows x channels matrix (rows = samples x pixels), per channel. Training mode
  // normalises with the batch's mean and biased variance, keeps mean and 1/sqrt(var + epsilon) for backward,
  // and moves the running statistics: running = (1 - momentum) * running + momentum * batch (the running
  // variance takes the unbiased batch variance, as PyTorch does). Reductions run in a fixed order: the same
  // inputs give the same bits on every call.
  struct BatchNormTensors {
    const float* gamma;
    const float* beta;
    float* running_mean;
    float* running_var;
    float* batch_mean;     // channels floats, written in training mode
    float* batch_inv_std;  // channels floats, written in training mode
  };
  virtual void batch_norm_training(const float* x, float* y, const BatchNormTensors& tensors, float momentum,
                                   float epsilon, int rows, int channels) = 0;
  // Normalises with the running statistics (evaluation).
  virtual void batch_norm_inference(const float* x, float* y, const BatchNormTensors& tensors, float epsilon, int rows,
                                    int channels) = 0;
  // After batch_norm_training on the same x: OVERWRITES dx, dgamma and dbeta.
  virtual void batch_norm_backward(const float* x, const float* dy, const BatchNormTensors& tensors, float* dx,
                                   float* dgamma, float* dbeta, int rows, int channels) = 0;

  // Dropout's mask: mask[i] = 1 / (1 - rate) where counter_uniform(key, i) >= rate, else 0 (core/counter_random.h),
  // so the same key draws the same mask on every backend.
  virtual void dropout_mask(float* mask, std::size_t count, float rate, std::uint64_t key) = 0;

  // Embedding rows: out[r, :] = table[ids[r], :] for `count` ids (integers stored as floats, exact below 2^24);
  // Error(kInputData) naming the id when one is not an integer in [0, table_rows).
  virtual void gather_rows(const float* table, const float* ids, float* out, int count, int dim, int table_rows) = 0;
  // OVERWRITES table_gradient (table_rows x dim) with the sum of row_gradients[r] over the rows r whose id is
  // that row (zero elsewhere), summed in r order.
  virtual void scatter_add_rows(const float* row_gradients, const float* ids, float* table_gradient, int count, int dim,
                                int table_rows) = 0;

  // Host staging memory for the one-sided push/pull and the batch upload: page-locked (cudaMallocHost) on a
  // GPU backend so the copies run at full speed and asynchronously, plain aligned memory on the CPU backend.
  // A copy_from_host FROM staging memory may return before the copy is done: the caller must not change the
  // source before synchronize() (or a copy_to_host, which synchronises).
  virtual void* allocate_host_staging(std::size_t bytes);
  virtual void release_host_staging(void* pointer) noexcept;

  // The points of a training step that split its GPU time into data, forward, backward and the time between steps,
  // measured with events on a GPU backend's own stream (compute/cuda/step_timeline.h); no-ops on the CPU backend.
  enum class StepPoint { kStart, kBatchLoaded, kForwardDone, kBackwardDone };
  virtual void mark_step(StepPoint /*point*/) {}
  // The mean of each phase over the steps marked since the last call, as one line for the log (empty where
  // nothing was measured); starts a new count.
  virtual std::string take_step_breakdown() { return {}; }

  // Waits for all queued work (a no-op on the CPU backend).
  virtual void synchronize() {}
  // The backend's CUDA stream (cudaStream_t) for NCCL, or null on the CPU backend.
  virtual void* native_stream() { return nullptr; }
};

std::unique_ptr<Backend> make_cpu_backend();

// How a CUDA backend runs convolutions: cuDNN where the build has cuDNN support, the machine has a cuDNN 9 and it
// has a deterministic algorithm for the shape (compute/cuda/cudnn_convolution.h), else im2col + cuBLAS; or
// im2col + cuBLAS always (the path before cuDNN, and the tests' second path).
enum class GpuConvolutions { kFastest, kIm2colGemm };

// GPUs (compute/devices_none.cc or cuda/devices.cc, whichever the build has).
// Number of CUDA devices this process can use; 0 when the build has no CUDA, there is no driver or no device.
int gpu_count();
// A CUDA backend on device `ordinal` (cudaSetDevice for this process). Throws pstrain::Error(kUsage) naming
// the problem when the build has no CUDA or the ordinal does not exist.
std::unique_ptr<Backend> make_gpu_backend(int ordinal, GpuConvolutions convolutions = GpuConvolutions::kFastest);
// True when this binary was compiled with the CUDA backend.
bool built_with_cuda();

// RAII owner of backend memory.
template <typename T>
class Buffer {
 public:
  Buffer() = default;
  Buffer(Backend& backend, std::size_t count)
      : backend_(&backend), data_(static_cast<T*>(backend.allocate_bytes(count * sizeof(T)))), count_(count) {}
  ~Buffer() { reset(); }
  Buffer(Buffer&& other) noexcept { swap(other); }
  Buffer& operator=(Buffer&& other) noexcept {
    if (this != &other) {
      reset();
      swap(other);
    }
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  T* data() const { return data_; }
  std::size_t size() const { return count_; }

 private:
  void reset() noexcept {
    if (data_ != nullptr) backend_->release_bytes(data_);
    data_ = nullptr;
    count_ = 0;
  }
  void swap(Buffer& other) noexcept {
    std::swap(backend_, other.backend_);
    std::swap(data_, other.data_);
    std::swap(count_, other.count_);
  }
  Backend* backend_ = nullptr;
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

// RAII owner of host staging memory (Backend::allocate_host_staging): host memory the caller reads and writes
// directly, page-locked on a GPU backend.
template <typename T>
class StagingBuffer {
 public:
  StagingBuffer(Backend& backend, std::size_t count)
      : backend_(backend), data_(static_cast<T*>(backend.allocate_host_staging(count * sizeof(T)))), count_(count) {}
  ~StagingBuffer() { backend_.release_host_staging(data_); }
  StagingBuffer(const StagingBuffer&) = delete;
  StagingBuffer& operator=(const StagingBuffer&) = delete;

  std::span<T> span() const { return {data_, count_}; }

 private:
  Backend& backend_;
  T* data_;
  std::size_t count_;
};

}  // namespace pstrain::compute
