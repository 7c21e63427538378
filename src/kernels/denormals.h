// Flushes subnormal floats to zero while in scope, on the calling thread, and restores the
// previous mode after. Softmax weights of far-away positions underflow into the subnormal range,
// where x86 arithmetic (and some ARM cores) runs tens of times slower; values below 1.2e-38
// beside a weight of 1 change nothing a float can show. No-op where the mode is not exposed.
#pragma once

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace ds::kernels::internal {

class FlushDenormalsScope {
 public:
#if defined(__x86_64__)
  // MXCSR flush-to-zero (bit 15) and denormals-are-zero (bit 6).
  static constexpr unsigned kFlushBits = 0x8040;
  FlushDenormalsScope() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | kFlushBits); }
  ~FlushDenormalsScope() { _mm_setcsr(saved_); }

 private:
  unsigned saved_;
#elif defined(__aarch64__)
  // FPCR flush-to-zero (bit 24).
  static constexpr unsigned kFlushBit = 1u << 24;
  FlushDenormalsScope() : saved_(__builtin_aarch64_get_fpcr()) {
    __builtin_aarch64_set_fpcr(saved_ | kFlushBit);
  }
  ~FlushDenormalsScope() { __builtin_aarch64_set_fpcr(saved_); }

 private:
  unsigned saved_;
#else
  FlushDenormalsScope() = default;
#endif
 public:
  FlushDenormalsScope(const FlushDenormalsScope&) = delete;
  FlushDenormalsScope& operator=(const FlushDenormalsScope&) = delete;
};

}  // namespace ds::kernels::internal
