#include "base/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <cstdio>

namespace ds {

void SetLogLevel(const std::string& level_name) {
  // Standard output carries results (generated text, JSON); logs go to standard error.
  if (spdlog::get("deltaserve") == nullptr) {
    spdlog::set_default_logger(spdlog::stderr_color_mt("deltaserve"));
  }
  spdlog::set_level(spdlog::level::from_str(level_name));
  // Standard error is buffered when it is a file; a request's line must be there when it ends.
  spdlog::flush_on(spdlog::level::info);
  spdlog::set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ %v");
}

std::string LogSafe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace ds
