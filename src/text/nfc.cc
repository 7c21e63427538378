#include "text/nfc.h"

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "text/unicode.h"

namespace ds::text {
namespace {

struct CccRange {
  uint32_t first, last, ccc;
};
struct Decomposition {
  uint32_t cp, first, second;  // second == 0: a singleton decomposition
  uint32_t primary_composite;  // 1 when NFC may recompose (first, second) into cp
};

#include "text/nfc_data.inc"

// Hangul syllables decompose and compose arithmetically (Unicode 3.12).
constexpr uint32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr uint32_t kLCount = 19, kVCount = 21, kTCount = 28;
constexpr uint32_t kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

struct Tables {
  std::unordered_map<uint32_t, const Decomposition*> decomposition;
  std::unordered_map<uint64_t, uint32_t> composite;  // (first << 32 | second) -> composite
};

const Tables& GetTables() {
  static const Tables tables = [] {
    Tables t;
    for (const Decomposition& d : kDecompositions) {
      t.decomposition.emplace(d.cp, &d);
      if (d.primary_composite) t.composite.emplace(uint64_t{d.first} << 32 | d.second, d.cp);
    }
    return t;
  }();
  return tables;
}

uint32_t CombiningClass(uint32_t cp) {
  if (cp < kNfcQuickBound) return 0;
  const CccRange* end = std::end(kCccRanges);
  const CccRange* it = std::upper_bound(std::begin(kCccRanges), end, cp,
                                        [](uint32_t c, const CccRange& r) { return c < r.first; });
  if (it == std::begin(kCccRanges)) return 0;
  --it;
  return cp <= it->last ? it->ccc : 0;
}

void Decompose(uint32_t cp, std::vector<uint32_t>* out) {
  if (cp >= kSBase && cp < kSBase + kSCount) {
    const uint32_t s = cp - kSBase;
    out->push_back(kLBase + s / kNCount);
    out->push_back(kVBase + (s % kNCount) / kTCount);
    if (s % kTCount != 0) out->push_back(kTBase + s % kTCount);
    return;
  }
  const auto& map = GetTables().decomposition;
  const auto it = cp < kNfcQuickBound ? map.end() : map.find(cp);
  if (it == map.end()) {
    out->push_back(cp);
    return;
  }
  Decompose(it->second->first, out);
  if (it->second->second != 0) Decompose(it->second->second, out);
}

// The composite of (first, second), or 0 when they do not compose.
uint32_t Compose(uint32_t first, uint32_t second) {
  if (first >= kLBase && first < kLBase + kLCount && second >= kVBase &&
      second < kVBase + kVCount) {
    return kSBase + ((first - kLBase) * kVCount + (second - kVBase)) * kTCount;
  }
  if (first >= kSBase && first < kSBase + kSCount && (first - kSBase) % kTCount == 0 &&
      second > kTBase && second < kTBase + kTCount) {
    return first + (second - kTBase);
  }
  const auto& map = GetTables().composite;
  const auto it = map.find(uint64_t{first} << 32 | second);
  return it == map.end() ? 0 : it->second;
}

// Canonical composition in place (Unicode 3.11, D117).
void ComposeAll(std::vector<uint32_t>* cps) {
  std::vector<uint32_t>& s = *cps;
  if (s.empty()) return;
  size_t starter = 0;
  bool have_starter = CombiningClass(s[0]) == 0;
  uint32_t last_ccc = have_starter ? 0 : 256;
  size_t out = 1;
  for (size_t i = 1; i < s.size(); ++i) {
    const uint32_t cp = s[i];
    const uint32_t ccc = CombiningClass(cp);
    const bool blocked = out - 1 != starter && (last_ccc == 0 || last_ccc >= ccc);
    const uint32_t composite = have_starter && !blocked ? Compose(s[starter], cp) : 0;
    if (composite != 0) {
      s[starter] = composite;
      continue;
    }
    if (ccc == 0) {
      starter = out;
      have_starter = true;
    }
    last_ccc = ccc;
    s[out++] = cp;
  }
  s.resize(out);
}

}  // namespace

std::string NormalizeNfc(std::string_view text) {
  std::vector<uint32_t> cps = CodepointsFromUtf8(text);
  if (std::all_of(cps.begin(), cps.end(), [](uint32_t cp) { return cp < kNfcQuickBound; })) {
    std::string same;
    for (uint32_t cp : cps) AppendUtf8(cp, &same);
    return same;
  }
  std::vector<uint32_t> decomposed;
  decomposed.reserve(cps.size());
  for (uint32_t cp : cps) Decompose(cp, &decomposed);
  // Canonical ordering: stable-sort each run of non-starters by combining class.
  for (size_t i = 0; i < decomposed.size();) {
    size_t j = i;
    while (j < decomposed.size() && CombiningClass(decomposed[j]) != 0) ++j;
    if (j - i > 1) {
      std::stable_sort(decomposed.begin() + i, decomposed.begin() + j, [](uint32_t a, uint32_t b) {
        return CombiningClass(a) < CombiningClass(b);
      });
    }
    i = j == i ? i + 1 : j;
  }
  ComposeAll(&decomposed);
  std::string out;
  out.reserve(text.size());
  for (uint32_t cp : decomposed) AppendUtf8(cp, &out);
  return out;
}

}  // namespace ds::text
