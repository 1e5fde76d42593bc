// Backend defaults shared by every implementation.
#include <new>

#include "compute/backend.h"

namespace pstrain::compute {

namespace {
constexpr std::align_val_t kStagingAlignment{64};
}

void* Backend::allocate_host_staging(std::size_t bytes) {
  return ::operator new(bytes == 0 ? 1 : bytes, kStagingAlignment);
}

void Backend::release_host_staging(void* pointer) noexcept {
  ::operator delete(pointer, kStagingAlignment);
}

}  // namespace pstrain::compute
