// Memory for large buffers that are read through from end to end, over and over: a sequence's
// KV cache, which every decode step reads whole. Such buffers are backed by 2 MiB pages where
// the kernel allows it (transparent huge pages in their "madvise" or "always" mode), so
// that a read walks the page tables once per 2 MiB instead of once per 4 KiB (in a virtual
// machine, a nested walk each time). On our 2-core virtual machine the attention of a decode step
// at depth 32k took 0.97 of the time on one thread (kernels_bench, median of ten interleaved
// pairs); on two, within noise.
#pragma once

#include <cstddef>

namespace ds {

// Buffers of this size or more are the ones backed by huge pages.
inline constexpr size_t kHugePageBytes = size_t{2} << 20;

// At least `bytes` bytes; buffers of 2 MiB or more are aligned to 2 MiB and asked to be backed by
// huge pages, smaller ones come from operator new. Throws std::bad_alloc when out of memory.
void* AllocateLargeBuffer(size_t bytes);
// Frees what AllocateLargeBuffer(bytes) returned, given the same `bytes`.
void FreeLargeBuffer(void* buffer, size_t bytes);
// Whether the kernel backs a large buffer with 2 MiB pages: transparent huge pages are on
// ("always" or "madvise"), not "never" or absent.
bool HugePagesAvailable();

// A standard allocator over AllocateLargeBuffer, for std::vector.
template <class T>
class LargeBufferAllocator {
 public:
  using value_type = T;
  LargeBufferAllocator() = default;
  template <class U>
  LargeBufferAllocator(const LargeBufferAllocator<U>&) {}  // NOLINT: converting, as std::allocator
  T* allocate(size_t n) { return static_cast<T*>(AllocateLargeBuffer(n * sizeof(T))); }
  void deallocate(T* p, size_t n) { FreeLargeBuffer(p, n * sizeof(T)); }
  // Elements a vector grows by are default-initialised, not zeroed: a buffer that keeps room for
  // far more than it holds commits pages only as they are written.
  template <class U>
  void construct(U* p) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U>
  bool operator==(const LargeBufferAllocator<U>&) const {
    return true;
  }
};

}  // namespace ds
