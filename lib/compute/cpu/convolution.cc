// CPU im2col/col2im and max pooling (NHWC). PLACEHOLDER: to be implemented.
#include "compute/cpu/cpu_backend.h"
#include "core/error.h"

namespace pstrain::compute {

void CpuBackend::scale(float* data, std::size_t count, float factor) {
  for (std::size_t i = 0; i < count; ++i) data[i] *= factor;
}
void CpuBackend::im2col(const float*, float*, const ConvGeometry&, int) { PSTRAIN_ASSERT(false, "todo"); }
void CpuBackend::col2im(const float*, float*, const ConvGeometry&, int) { PSTRAIN_ASSERT(false, "todo"); }
void CpuBackend::max_pool_forward(const float*, float*, std::int32_t*, const PoolGeometry&, int) {
  PSTRAIN_ASSERT(false, "todo");
}
void CpuBackend::max_pool_backward(const float*, const std::int32_t*, float*, const PoolGeometry&, int) {
  PSTRAIN_ASSERT(false, "todo");
}

}  // namespace pstrain::compute
