// Monotonic time for timings. All durations in the project are measured with this clock.
#pragma once

#include <chrono>

namespace ds {

using Clock = std::chrono::steady_clock;

inline double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace ds
