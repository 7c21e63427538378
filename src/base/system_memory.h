// The memory the system can still give this process, for guards that must not exhaust it.
// Thread safety: a pure read of /proc; safe from any thread.
#pragma once

#include <cstdint>

namespace ds {

// MemAvailable of /proc/meminfo in bytes; -1 when it cannot be read.
int64_t AvailableMemoryBytes();

}  // namespace ds
