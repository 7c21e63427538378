// CHECK macros for programmer errors: a broken invariant aborts with file, line and message.
// Operating errors (bad input, IO) must return Status instead.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace ds::internal {
[[noreturn]] void CheckFailed(const char* file, int line, const char* condition, const char* msg);
}  // namespace ds::internal

#define DS_CHECK(cond)                                                   \
  do {                                                                   \
    if (!(cond)) ::ds::internal::CheckFailed(__FILE__, __LINE__, #cond, ""); \
  } while (0)

#define DS_CHECK_MSG(cond, msg)                                             \
  do {                                                                      \
    if (!(cond)) ::ds::internal::CheckFailed(__FILE__, __LINE__, #cond, msg); \
  } while (0)

#ifdef NDEBUG
#define DS_DCHECK(cond) \
  do {                  \
  } while (0)
#else
#define DS_DCHECK(cond) DS_CHECK(cond)
#endif
