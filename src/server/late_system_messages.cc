#include "server/late_system_messages.h"

namespace ds::server {
namespace {

constexpr std::string_view kUserOpen = "<|im_start|>user\n<tool_response>";
constexpr std::string_view kUserClose = "</tool_response><|im_end|>\n";

std::string_view Trim(std::string_view s) {
  const size_t begin = s.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(" \t\r\n") + 1 - begin);
}

}  // namespace

std::vector<LateSystemMessage> StandInLateSystemMessages(api::Json* messages) {
  std::vector<LateSystemMessage> late;
  if (!messages->is_array()) return late;
  for (size_t i = 1; i < messages->size(); ++i) {
    api::Json& message = (*messages)[i];
    if (!message.is_object() || message.value("role", "") != "system") continue;
    // Unit separators cannot come from a client's text unescaped by accident.
    const std::string id = "\x1f" "deltaserve-system-" + std::to_string(i);
    LateSystemMessage marks{id + "-open\x1f", id + "-close\x1f"};
    const api::Json content = message.contains("content") ? message["content"] : api::Json("");
    api::Json wrapped;
    if (content.is_array()) {
      wrapped = api::Json::array();
      wrapped.push_back({{"type", "text"}, {"text", "<tool_response>" + marks.open}});
      for (const api::Json& part : content) wrapped.push_back(part);
      wrapped.push_back({{"type", "text"}, {"text", marks.close + "</tool_response>"}});
    } else {
      wrapped = "<tool_response>" + marks.open +
                (content.is_string() ? content.get<std::string>() : std::string()) +
                marks.close + "</tool_response>";
    }
    message = api::Json{{"role", "user"}, {"content", std::move(wrapped)}};
    late.push_back(std::move(marks));
  }
  return late;
}

bool RestoreLateSystemMessages(const std::vector<LateSystemMessage>& late, std::string* text) {
  for (const LateSystemMessage& marks : late) {
    const std::string open = std::string(kUserOpen) + marks.open;
    const std::string close = marks.close + std::string(kUserClose);
    const size_t begin = text->find(open);
    if (begin == std::string::npos) return false;
    const size_t inner = begin + open.size();
    const size_t end = text->find(close, inner);
    if (end == std::string::npos) return false;
    // As the templates render a first system message: its content trimmed.
    const std::string block = "<|im_start|>system\n" +
                              std::string(Trim(std::string_view(*text).substr(inner, end - inner))) +
                              "<|im_end|>\n";
    text->replace(begin, end + close.size() - begin, block);
  }
  return true;
}

}  // namespace ds::server
