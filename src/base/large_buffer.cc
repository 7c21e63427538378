#include "base/large_buffer.h"

#include <cstdlib>
#include <fstream>
#include <new>
#include <string>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace ds {
namespace {

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

bool HugePagesAvailable() {
  // The file lists the modes with the active one in brackets: "always [madvise] never".
  std::ifstream modes("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  if (!std::getline(modes, line)) return false;
  return line.find("[always]") != std::string::npos ||
         line.find("[madvise]") != std::string::npos;
}

}  // namespace ds
