// System messages after the first, as Claude Code sends them (a reminder after a tool result),
// for templates such as Qwen3.5's that refuse them. Rendering one as a user message would make it
// the conversation's last query, and such a template then strips the reasoning of every turn
// since the previous query: the prompt would change thousands of tokens before the reminder, and
// the next turn would differ again. Instead each one stands in as a user message holding a tool
// response (which these templates do not take for a query) between markers, and the rendered
// block is then rewritten as the ChatML system block the model knows. Every earlier message
// renders exactly as it did without the reminder.
// Thread safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "api/types.h"

namespace ds::server {

struct LateSystemMessage {
  std::string open;   // marker before the content inside its stand-in
  std::string close;  // marker after it
};

// Replaces every system message but a first one with its stand-in; returns them in order (empty
// when there are none).
std::vector<LateSystemMessage> StandInLateSystemMessages(api::Json* messages);

// Rewrites each stand-in's rendered block in `text` as a system block. False, with `text` in an
// unknown state, when a block is not where a ChatML template would have put it.
bool RestoreLateSystemMessages(const std::vector<LateSystemMessage>& late, std::string* text);

}  // namespace ds::server
