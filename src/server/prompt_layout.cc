#include "server/prompt_layout.h"

#include <algorithm>

namespace ds::server {
namespace {

// A role is a short word; a header longer than this is not a ChatML header.
constexpr int64_t kMaxHeaderTokens = 8;

}  // namespace

std::vector<PromptMessage> FindMessages(std::span<const int32_t> ids,
                                        const text::Tokenizer& tokenizer) {
  std::vector<PromptMessage> messages;
  const int32_t start_id = tokenizer.FindToken("<|im_start|>");
  if (start_id < 0) return messages;
  const auto num_tokens = static_cast<int64_t>(ids.size());
  for (int64_t i = 0; i < num_tokens; ++i) {
    if (ids[i] != start_id) continue;
    PromptMessage message;
    message.begin = i;
    std::string header;
    int64_t j = i + 1;
    for (; j < num_tokens && j <= i + kMaxHeaderTokens; ++j) {
      header += tokenizer.TokenToPiece(ids[j], /*render_special=*/true);
      if (header.find('\n') != std::string::npos) break;
    }
    const size_t newline = header.find('\n');
    if (newline == std::string::npos) {
      // The generation prompt may end right after the role, or a header was cut off.
      message.role = header;
      message.content_begin = std::min(j, num_tokens);
    } else {
      message.role = header.substr(0, newline);
      message.content_begin = j + 1;
    }
    messages.push_back(std::move(message));
  }
  return messages;
}

std::vector<int64_t> SnapshotBoundaries(std::span<const PromptMessage> messages,
                                        int64_t num_tokens) {
  std::vector<int64_t> positions;
  if (messages.size() >= 2 && messages[0].role == "system") positions.push_back(messages[1].begin);
  for (const PromptMessage& message : messages) {
    if (message.role == "assistant") positions.push_back(message.content_begin);
  }
  for (size_t k = messages.size(); k-- > 0;) {
    if (messages[k].role == "user" || messages[k].role == "tool") {
      positions.push_back(messages[k].begin);
      break;
    }
  }
  std::erase_if(positions, [&](int64_t p) { return p <= 0 || p >= num_tokens; });
  std::sort(positions.begin(), positions.end());
  positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
  return positions;
}

int64_t MessageAt(std::span<const PromptMessage> messages, int64_t index) {
  auto it = std::upper_bound(messages.begin(), messages.end(), index,
                             [](int64_t i, const PromptMessage& m) { return i < m.begin; });
  return static_cast<int64_t>(it - messages.begin()) - 1;
}

}  // namespace ds::server
