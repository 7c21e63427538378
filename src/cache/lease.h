// Lease: pins the records a lookup returned so that no insert evicts them while the engine copies
// their payloads into a sequence. Move-only; releases on destruction or Release().
// REQUIRES: every lease is released before its PrefixCache is destroyed, on the engine thread.
#pragma once

#include <vector>

#include "cache/types.h"

namespace ds::cache {

class PrefixCache;

class Lease {
 public:
  Lease() = default;
  Lease(Lease&& other) noexcept;
  Lease& operator=(Lease&& other) noexcept;
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  ~Lease();

  // Unpins now; a no-op when nothing is held.
  void Release();
  bool held() const { return cache_ != nullptr; }

 private:
  friend class PrefixCache;
  Lease(PrefixCache* cache, std::vector<PayloadId> ids);

  PrefixCache* cache_ = nullptr;
  std::vector<PayloadId> ids_;  // root-to-leaf order
};

}  // namespace ds::cache
