#include "text/merge.h"

#include <algorithm>
#include <queue>

#include "text/unicode.h"

namespace ds::text {
namespace {

// A live run of the input: bytes [start, start + length), linked to its neighbours.
struct Symbol {
  size_t start;
  size_t length;  // 0 once merged into its left neighbour
  int prev;
  int next;
};

// Splits `text` into one symbol per UTF-8 character (lead-byte length, clamped at the end).
std::vector<Symbol> SplitChars(std::string_view text) {
  std::vector<Symbol> symbols;
  size_t offset = 0;
  while (offset < text.size()) {
    const size_t n =
        std::min(Utf8LengthFromLead(static_cast<uint8_t>(text[offset])), text.size() - offset);
    const int index = static_cast<int>(symbols.size());
    symbols.push_back({offset, n, index - 1, offset + n == text.size() ? -1 : index + 1});
    offset += n;
  }
  return symbols;
}

void MergeRightIntoLeft(std::vector<Symbol>& symbols, int left) {
  Symbol& l = symbols[left];
  Symbol& r = symbols[l.next];
  l.length += r.length;
  r.length = 0;
  l.next = r.next;
  if (l.next >= 0) symbols[l.next].prev = left;
}

struct BpePair {
  int32_t rank;
  int left;
  int right;
  size_t left_length;
  size_t right_length;
  // std::priority_queue pops the "largest": make that the lowest rank, then the leftmost.
  bool operator<(const BpePair& o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
};

struct SpmPair {
  float score;
  int left;
  int right;
  size_t length;
  bool operator<(const SpmPair& o) const {
    return score != o.score ? score < o.score : left > o.left;
  }
};

}  // namespace

BpeMerger::BpeMerger(const std::vector<std::string>& merges) {
  ranks_.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    // Split as llama.cpp does: at the first space after the first byte.
    const std::string& m = merges[i];
    const size_t space = m.find(' ', 1);
    std::string key;
    if (space != std::string::npos) key = m.substr(0, space) + '\0' + m.substr(space + 1);
    ranks_.emplace(std::move(key), static_cast<int32_t>(i));
  }
}

int32_t BpeMerger::Rank(std::string_view left, std::string_view right, std::string* scratch) const {
  scratch->assign(left);
  scratch->push_back('\0');
  scratch->append(right);
  const auto it = ranks_.find(std::string_view(*scratch));
  return it == ranks_.end() ? -1 : it->second;
}

void BpeMerger::EncodeWord(std::string_view word, const TokenLookup& tokens, bool ignore_merges,
                           std::vector<int32_t>* out) const {
  if (ignore_merges) {
    const int32_t id = tokens.Find(word);
    if (id >= 0) {
      out->push_back(id);
      return;
    }
  }
  std::vector<Symbol> symbols = SplitChars(word);
  std::priority_queue<BpePair> queue;
  std::string scratch;
  auto text = [&](int i) { return word.substr(symbols[i].start, symbols[i].length); };
  auto try_add = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const int32_t rank = Rank(text(left), text(right), &scratch);
    if (rank >= 0) queue.push({rank, left, right, symbols[left].length, symbols[right].length});
  };
  for (int i = 1; i < static_cast<int>(symbols.size()); ++i) try_add(i - 1, i);

  while (!queue.empty()) {
    const BpePair pair = queue.top();
    queue.pop();
    // Symbols only grow, so unchanged lengths mean the pair still spells the same text.
    if (symbols[pair.left].length != pair.left_length ||
        symbols[pair.right].length != pair.right_length) {
      continue;
    }
    MergeRightIntoLeft(symbols, pair.left);
    try_add(symbols[pair.left].prev, pair.left);
    try_add(pair.left, symbols[pair.left].next);
  }

  for (int i = symbols.empty() ? -1 : 0; i >= 0; i = symbols[i].next) {
    const std::string_view piece = text(i);
    const int32_t id = tokens.Find(piece);
    if (id >= 0) {
      out->push_back(id);
      continue;
    }
    for (char c : piece) {
      const int32_t byte_id = tokens.Find(std::string_view(&c, 1));
      if (byte_id >= 0) out->push_back(byte_id);
    }
  }
}

void SpmEncode(std::string_view text, const TokenLookup& tokens, std::span<const float> scores,
               std::span<const int32_t> byte_tokens, std::vector<int32_t>* out) {
  std::vector<Symbol> symbols = SplitChars(text);
  std::priority_queue<SpmPair> queue;
  auto piece = [&](int i) { return text.substr(symbols[i].start, symbols[i].length); };
  auto try_add = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const size_t length = symbols[left].length + symbols[right].length;
    const int32_t id = tokens.Find(text.substr(symbols[left].start, length));
    if (id < 0 || static_cast<size_t>(id) >= scores.size()) return;
    queue.push({scores[id], left, right, length});
  };
  for (int i = 1; i < static_cast<int>(symbols.size()); ++i) try_add(i - 1, i);

  while (!queue.empty()) {
    const SpmPair pair = queue.top();
    queue.pop();
    const Symbol& l = symbols[pair.left];
    const Symbol& r = symbols[pair.right];
    if (l.length == 0 || r.length == 0 || l.length + r.length != pair.length) continue;
    MergeRightIntoLeft(symbols, pair.left);
    try_add(symbols[pair.left].prev, pair.left);
    try_add(pair.left, symbols[pair.left].next);
  }

  for (int i = symbols.empty() ? -1 : 0; i >= 0; i = symbols[i].next) {
    const std::string_view p = piece(i);
    const int32_t id = tokens.Find(p);
    if (id >= 0) {
      out->push_back(id);
      continue;
    }
    // Every merged symbol is a token, so only unmerged characters get here.
    for (char c : p) {
      const int32_t byte_id = byte_tokens[static_cast<uint8_t>(c)];
      if (byte_id >= 0) out->push_back(byte_id);
    }
  }
}

}  // namespace ds::text
