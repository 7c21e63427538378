// Test support: the messages logged at info level or above while a LogCapture lives. It swaps
// spdlog's default logger, which spdlog does not guard against threads logging at that moment:
// create it before the server starts and let it go after the server stopped (a member of the
// test fixture does both).
#pragma once

#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <string>
#include <vector>

namespace ds::apps {

class LogCapture {
 public:
  LogCapture()
      : previous_(spdlog::default_logger()),
        sink_(std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(kMaxMessages)) {
    auto logger = std::make_shared<spdlog::logger>("capture", sink_);
    logger->set_level(spdlog::level::debug);
    spdlog::set_default_logger(std::move(logger));
  }
  ~LogCapture() { spdlog::set_default_logger(previous_); }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  // Oldest first; safe while the server logs.
  std::vector<std::string> InfoMessages() const {
    std::vector<std::string> messages;
    for (const auto& message : sink_->last_raw()) {
      if (message.level >= spdlog::level::info) {
        messages.emplace_back(message.payload.data(), message.payload.size());
      }
    }
    return messages;
  }

 private:
  static constexpr size_t kMaxMessages = 10000;
  std::shared_ptr<spdlog::logger> previous_;
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
};

}  // namespace ds::apps
