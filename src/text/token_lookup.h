// TokenLookup: token text -> id, looked up by string_view without allocating.
// Immutable after construction; safe to read from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace ds::text {

struct TransparentStringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

template <typename V>
using StringMap = std::unordered_map<std::string, V, TransparentStringHash, std::equal_to<>>;

class TokenLookup {
 public:
  // Returns false when `text` is already present (the vocabulary has a duplicate).
  bool Insert(std::string text, int32_t id) { return map_.emplace(std::move(text), id).second; }
  // The id of the token spelled exactly `text`, or -1.
  int32_t Find(std::string_view text) const {
    const auto it = map_.find(text);
    return it == map_.end() ? -1 : it->second;
  }

 private:
  StringMap<int32_t> map_;
};

}  // namespace ds::text
