#include "bench/quote.h"

namespace ds::bench {

std::string Quote(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  size_t cut = max_bytes;
  // Back off continuation bytes (10xxxxxx) so the cut falls before a character's first byte.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut));
}

}  // namespace ds::bench
