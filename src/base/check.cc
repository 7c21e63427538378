#include "base/check.h"

namespace ds::internal {

void CheckFailed(const char* file, int line, const char* condition, const char* msg) {
  std::fprintf(stderr, "deltaserve: CHECK failed at %s:%d: %s %s\n", file, line, condition, msg);
  std::fflush(stderr);
  std::abort();
}

}  // namespace ds::internal
