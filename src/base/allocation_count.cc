#include "base/allocation_count.h"

#include <atomic>
#include <cstdlib>
#include <new>

namespace ds {
namespace {

std::atomic<int64_t> allocations{0};

}  // namespace

int64_t AllocationsSoFar() { return allocations.load(std::memory_order_relaxed); }

}  // namespace ds

// The other forms of new (arrays, nothrow) call this one; aligned new keeps its own allocator
// and its own delete.
void* operator new(std::size_t bytes) {
  ds::allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(bytes == 0 ? 1 : bytes)) return p;
  throw std::bad_alloc();
}

void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
