#include "compute/opaque_backend.h"

#include "compute/cpu/cpu_backend.h"

namespace pstrain::compute {

namespace {

// Forwards everything to a CpuBackend; only host_accessible() differs.
class OpaqueCpuBackend final : public Backend {
 public:
  std::string name() const override { return "cpu-opaque (testing)"; }
  bool host_accessible() const override { return false; }

  void* allocate_bytes(std::size_t bytes) override { return cpu_.allocate_bytes(bytes); }
  void release_bytes(void* pointer) noexcept override { cpu_.release_bytes(pointer); }
  void copy_from_host(void* destination, const void* source, std::size_t bytes) override {
    cpu_.copy_from_host(destination, source, bytes);
  }
  void copy_to_host(void* destination, const void* source, std::size_t bytes) override {
    cpu_.copy_to_host(destination, source, bytes);
  }
  void fill(float* data, std::size_t count, float value) override { cpu_.fill(data, count, value); }
  void gemm(bool transpose_a, bool transpose_b, int m, int n, int k, float alpha, const float* a, const float* b,
            float beta, float* c) override {
    cpu_.gemm(transpose_a, transpose_b, m, n, k, alpha, a, b, beta, c);
  }
  void add_row_bias(float* y, const float* bias, int rows, int cols) override { cpu_.add_row_bias(y, bias, rows, cols); }
  void sum_rows(const float* x, float* out, int rows, int cols, float beta) override {
    cpu_.sum_rows(x, out, rows, cols, beta);
  }
  void activation_forward(Activation activation, const float* x, float* y, std::size_t count) override {
    cpu_.activation_forward(activation, x, y, count);
  }
  void activation_backward(Activation activation, const float* y, const float* dy, float* dx,
                           std::size_t count) override {
    cpu_.activation_backward(activation, y, dy, dx, count);
  }
  LossResult softmax_cross_entropy(const float* logits, const std::int32_t* labels, float* dlogits, int rows,
                                   int classes) override {
    return cpu_.softmax_cross_entropy(logits, labels, dlogits, rows, classes);
  }
  void scale(float* data, std::size_t count, float factor) override { cpu_.scale(data, count, factor); }
  void im2col(const float* x, float* columns, const ConvGeometry& geometry, int batch) override {
    cpu_.im2col(x, columns, geometry, batch);
  }
  void col2im(const float* columns, float* dx, const ConvGeometry& geometry, int batch) override {
    cpu_.col2im(columns, dx, geometry, batch);
  }
  void max_pool_forward(const float* x, float* y, std::int32_t* argmax, const PoolGeometry& geometry,
                        int batch) override {
    cpu_.max_pool_forward(x, y, argmax, geometry, batch);
  }
  void max_pool_backward(const float* dy, const std::int32_t* argmax, float* dx, const PoolGeometry& geometry,
                         int batch) override {
    cpu_.max_pool_backward(dy, argmax, dx, geometry, batch);
  }

 private:
  CpuBackend cpu_;
};

}  // namespace

std::unique_ptr<Backend> make_opaque_cpu_backend() { return std::make_unique<OpaqueCpuBackend>(); }

}  // namespace pstrain::compute
