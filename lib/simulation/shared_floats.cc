#include "simulation/shared_floats.h"

#include <smpi/smpi.h>

#include <algorithm>
#include <new>

namespace pstrain::simulation {

SharedFloats::SharedFloats(std::size_t size, float value)
    : data_(static_cast<float*>(SMPI_SHARED_MALLOC(std::max<std::size_t>(size, 1) * sizeof(float)))), size_(size) {
  if (data_ == nullptr) throw std::bad_alloc();
  std::fill_n(data_, size_, value);
}

SharedFloats::~SharedFloats() {
  SMPI_SHARED_FREE(data_);
}

}  // namespace pstrain::simulation
