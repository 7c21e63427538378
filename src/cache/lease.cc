#include "cache/lease.h"

#include <utility>

#include "cache/prefix_cache.h"

namespace ds::cache {

Lease::Lease(PrefixCache* cache, std::vector<PayloadId> ids)
    : cache_(cache), ids_(std::move(ids)) {}

Lease::Lease(Lease&& other) noexcept
    : cache_(std::exchange(other.cache_, nullptr)), ids_(std::move(other.ids_)) {}

Lease& Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    Release();
    cache_ = std::exchange(other.cache_, nullptr);
    ids_ = std::move(other.ids_);
  }
  return *this;
}

Lease::~Lease() { Release(); }

void Lease::Release() {
  if (cache_ == nullptr) return;
  cache_->ReleaseLease(ids_);
  cache_ = nullptr;
  ids_.clear();
}

}  // namespace ds::cache
