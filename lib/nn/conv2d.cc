#include "nn/conv2d.h"

#include "core/error.h"

namespace pstrain::nn {

Conv2d::Conv2d(compute::Backend& backend, const compute::ConvGeometry& geometry, int filters, Conv2dView view)
    : backend_(backend), geometry_(geometry), filters_(filters), view_(view) {
  PSTRAIN_ASSERT(filters > 0 && geometry.channels > 0 && geometry.kernel > 0 && geometry.out_height() > 0 &&
                     geometry.out_width() > 0,
                 "convolution of ", filters, " filters over ", geometry.height, "x", geometry.width, "x",
                 geometry.channels, " with kernel ", geometry.kernel);
}

std::size_t Conv2d::columns_size(std::size_t batch) const {
  return batch * static_cast<std::size_t>(geometry_.out_height()) * static_cast<std::size_t>(geometry_.out_width()) *
         static_cast<std::size_t>(geometry_.column_width());
}

std::size_t Conv2d::output_size(std::size_t batch) const {
  return batch * static_cast<std::size_t>(geometry_.out_height()) * static_cast<std::size_t>(geometry_.out_width()) *
         static_cast<std::size_t>(filters_);
}

void Conv2d::forward(const float* x, float* columns, float* y, int batch) const {
  backend_.im2col(x, columns, geometry_, batch);
  backend_.gemm(false, true, rows(batch), filters_, geometry_.column_width(), 1.0f, columns, view_.weight, 0.0f, y);
  backend_.add_row_bias(y, view_.bias, rows(batch), filters_);
}

void Conv2d::backward(float* columns, const float* dy, float* dx, int batch) {
  const int width = geometry_.column_width();
  backend_.gemm(true, false, filters_, width, rows(batch), 1.0f, dy, columns, 0.0f, view_.weight_gradient);
  backend_.sum_rows(dy, view_.bias_gradient, rows(batch), filters_, 0.0f);
  if (dx == nullptr) return;
  // dL/dcolumns = dy W overwrites the columns (no longer needed), and col2im sums them back onto the pixels.
  backend_.gemm(false, false, rows(batch), width, filters_, 1.0f, dy, view_.weight, 0.0f, columns);
  backend_.col2im(columns, dx, geometry_, batch);
}

}  // namespace pstrain::nn
