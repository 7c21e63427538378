// Test support: the number of calls of the global operator new so far in a binary that links
// allocation_count.cc, which replaces it (over malloc). Link it only into test binaries that
// check code paths promised to allocate nothing.
#pragma once

#include <cstdint>

namespace ds {

int64_t AllocationsSoFar();

}  // namespace ds
