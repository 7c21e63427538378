// A bound on how deeply JSON text nests, checked on the text before any parser sees it. The
// parser itself is iterative, but everything that walks a parsed value (conversion to template
// values, dumping, schema walks) recurses once per level: 40,000 levels in a 240 KB body
// overflow a thread's stack. Text deeper than the bound is refused or kept as plain text.
#pragma once

#include <string_view>

namespace ds {

// Deep enough for any real tool schema or template argument; shallow enough that every
// recursive walk of a value stays far from the 8 MiB thread stack.
inline constexpr int kMaxJsonDepth = 128;

// True when no array or object in `text` opens more than `max_depth` levels deep. Brackets
// inside strings (escapes included) do not count; the text need not be valid JSON.
bool JsonDepthWithin(std::string_view text, int max_depth = kMaxJsonDepth);

}  // namespace ds
