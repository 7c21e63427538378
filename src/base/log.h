// Logging goes through spdlog; this header fixes the project's logger name and format so every
// module logs the same way.
#pragma once

#include <spdlog/spdlog.h>

#include <string>
#include <string_view>

namespace ds {

// Sets the global level from a name ("debug", "info", "warn", "error", "off").
void SetLogLevel(const std::string& level_name);

// `text` with newlines, tabs and other control characters escaped, and quotes and backslashes
// too, so that text from a request (a prompt, a path, an error quoting a body) keeps one log
// record on one line and can be quoted.
std::string LogSafe(std::string_view text);

}  // namespace ds

#define DS_LOG_DEBUG(...) ::spdlog::debug(__VA_ARGS__)
#define DS_LOG_INFO(...) ::spdlog::info(__VA_ARGS__)
#define DS_LOG_WARN(...) ::spdlog::warn(__VA_ARGS__)
#define DS_LOG_ERROR(...) ::spdlog::error(__VA_ARGS__)
