#include "nn/dense.h"

#include <limits>

#include "core/error.h"

namespace pstrain::nn {

Dense::Dense(compute::Backend& backend, std::size_t inputs, std::size_t outputs, DenseView view)
    : backend_(backend), inputs_(static_cast<int>(inputs)), outputs_(static_cast<int>(outputs)), view_(view) {
  // The backend speaks BLAS-style int sizes.
  constexpr auto kMaxInt = static_cast<std::size_t>(std::numeric_limits<int>::max());
  PSTRAIN_ASSERT(inputs > 0 && outputs > 0 && inputs <= kMaxInt && outputs <= kMaxInt, "dense layer ", inputs, " -> ",
                 outputs);
}

void Dense::forward(const float* x, float* y, int batch) const {
  // beta = 0 writes the product straight into y: no zeroing pass, no temporary.
  backend_.gemm(false, true, batch, outputs_, inputs_, 1.0f, x, view_.weight, 0.0f, y);
  backend_.add_row_bias(y, view_.bias, batch, outputs_);
}

void Dense::backward(const float* x, const float* dy, float* dx, int batch) {
  backend_.gemm(true, false, outputs_, inputs_, batch, 1.0f, dy, x, 0.0f, view_.weight_gradient);
  backend_.sum_rows(dy, view_.bias_gradient, batch, outputs_, 0.0f);
  if (dx != nullptr) backend_.gemm(false, false, batch, inputs_, outputs_, 1.0f, dy, view_.weight, 0.0f, dx);
}

}  // namespace pstrain::nn
