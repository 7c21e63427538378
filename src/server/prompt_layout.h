// Where the messages of a rendered chat prompt lie in its token ids, and so where the engine
// should snapshot the recurrent state: the points later requests of the same conversation come
// back to (../docs/cache.md).
//
// Messages are found from the ChatML markers the Qwen templates (and deltaserve's ChatML
// fallback) write: each message starts at an <|im_start|> token followed by its role and a
// newline. A template without that token yields no messages, and the cache then snapshots only
// at the end of the prompt, the end of the reply and at its interval.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "text/tokenizer.h"

namespace ds::server {

struct PromptMessage {
  int64_t begin = 0;          // index of its <|im_start|> token
  int64_t content_begin = 0;  // just past the "role\n" header
  std::string role;           // as rendered: system, user, assistant (tool results are user)
};

// In prompt order. The generation prompt at the end, if any, is the last (an empty assistant).
std::vector<PromptMessage> FindMessages(std::span<const int32_t> ids,
                                        const text::Tokenizer& tokenizer);

// Snapshot positions, ascending and inside (0, num_tokens): the end of the leading system block
// (system prompt and tools), the start of each assistant turn (where templates that drop old
// reasoning diverge) and the start of the last user or tool message.
std::vector<int64_t> SnapshotBoundaries(std::span<const PromptMessage> messages,
                                        int64_t num_tokens);

// The message holding token `index`, or -1 before the first one.
int64_t MessageAt(std::span<const PromptMessage> messages, int64_t index);

}  // namespace ds::server
