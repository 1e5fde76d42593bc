#pragma once
// SimGrid dry-run build only (lib/simulation/README.md): shadows lib/core/bulk_vector.h. SimGrid runs every rank
// in one process, so a parameter-server trainer's parameters and gradient and a node leader's sum and two receive
// buffers (26 MB each for ResNet width 1) were real memory once per rank: 19 GB for the 248 leaders of 1024 ranks
// alone. Under the dry-run their values decide nothing that is reported, so they are SMPI_SHARED_MALLOC'd
// (--cfg=smpi/shared-malloc:global): every allocation maps the same few pages of host memory.
#include <smpi/smpi.h>

#include <cstddef>
#include <new>
#include <vector>

namespace pstrain {

template <typename T>
struct SharedBlockAllocator {
  using value_type = T;
  SharedBlockAllocator() = default;
  template <typename U>
  SharedBlockAllocator(const SharedBlockAllocator<U>&) {}  // NOLINT(google-explicit-constructor): an allocator

  T* allocate(std::size_t n) {
    void* memory = SMPI_SHARED_MALLOC(n == 0 ? 1 : n * sizeof(T));
    if (memory == nullptr) throw std::bad_alloc();
    return static_cast<T*>(memory);
  }
  void deallocate(T* p, std::size_t) { SMPI_SHARED_FREE(p); }
  template <typename U>
  bool operator==(const SharedBlockAllocator<U>&) const {
    return true;
  }
};

template <typename T>
using BulkVector = std::vector<T, SharedBlockAllocator<T>>;

}  // namespace pstrain
