#include "base/large_buffer.h"

#include <cstdlib>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace ds {
namespace {

constexpr size_t kHugePageBytes = size_t{2} << 20;

size_t RoundedToHugePages(size_t bytes) {
  return (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
}

}  // namespace

void* AllocateLargeBuffer(size_t bytes) {
  if (bytes < kHugePageBytes) return ::operator new(bytes);
  const size_t rounded = RoundedToHugePages(bytes);
  void* buffer = std::aligned_alloc(kHugePageBytes, rounded);
  if (buffer == nullptr) throw std::bad_alloc();
#if defined(__linux__)
  // Before the first touch, which is when the kernel picks the page size. A kernel without
  // transparent huge pages refuses, and the buffer keeps small pages.
  madvise(buffer, rounded, MADV_HUGEPAGE);
#endif
  return buffer;
}

void FreeLargeBuffer(void* buffer, size_t bytes) {
  if (bytes < kHugePageBytes) {
    ::operator delete(buffer);
  } else {
    std::free(buffer);
  }
}

}  // namespace ds
