// Server text quoted in error messages. Quotes are cut short, and a cut in the middle of a UTF-8
// sequence would make the message invalid UTF-8, which the JSON report cannot hold.
// Thread safety: pure function.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ds::bench {

// The first `max_bytes` of `text` at most, ending on a UTF-8 character boundary.
std::string Quote(std::string_view text, size_t max_bytes);

}  // namespace ds::bench
