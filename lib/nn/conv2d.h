#pragma once
// A 2-D convolution over channels-last (NHWC) images, computed as im2col + ONE matrix product over the whole
// batch: the im2col rows are output pixels, so y = columns W^T + b is already NHWC and the bias is a row bias.
// The weight is stored {filters, kernel, kernel, channels}, i.e. a filters x column_width() matrix whose rows
// are in im2col's (ky, kx, c) order.
//
// Like Dense, the layer owns no memory: weight, bias and their gradients are views into the model's flat
// parameter and gradient buffers, and the im2col workspace and activations belong to the caller. All pointers
// are backend memory.
#include <cstddef>

#include "compute/backend.h"
#include "nn/layer_view.h"

namespace pstrain::nn {

using Conv2dView = LayerView;  // weight filters x kernel x kernel x channels, bias filters

class Conv2d {
 public:
  Conv2d(compute::Backend& backend, const compute::ConvGeometry& geometry, int filters, Conv2dView view);

  const compute::ConvGeometry& geometry() const { return geometry_; }
  int filters() const { return filters_; }
  // Floats of the im2col workspace, and of the output, for `batch` images.
  std::size_t columns_size(std::size_t batch) const;
  std::size_t output_size(std::size_t batch) const;

  // y (batch x out_h x out_w x filters) = conv(x) + b. Leaves im2col(x) in `columns` for backward.
  void forward(const float* x, float* columns, float* y, int batch) const;

  // Given dy = dL/dy and the `columns` left by the matching forward call: OVERWRITES dW = dy^T columns and
  // db = sum over rows of dy, and, unless dx is null (the first layer's input needs no gradient), writes
  // dx = col2im(dy W), using `columns` as its workspace (so they are gone afterwards).
  void backward(float* columns, const float* dy, float* dx, int batch);

 private:
  int rows(int batch) const { return batch * geometry_.out_height() * geometry_.out_width(); }

  compute::Backend& backend_;
  compute::ConvGeometry geometry_;
  int filters_;
  Conv2dView view_;
};

}  // namespace pstrain::nn
