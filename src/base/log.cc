#include "base/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>

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

}  // namespace ds
