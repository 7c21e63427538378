// Turns a normalised chat request into prompt token ids: renders the model's chat template (or
// ChatML when the model has none) and tokenises the result, and tells the output parser what the
// template implies (generation starting inside <think>, which tool-call syntax the model uses).
// Chat prompts are tokenised through the continuity memo (continuity_memo.h), and their message
// layout says where the engine snapshots (prompt_layout.h).
// Thread safety: Build() and RecordReply() may run on any thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "api/types.h"
#include "base/status.h"
#include "server/continuity_memo.h"
#include "server/prompt_layout.h"
#include "text/jinja/jinja.h"
#include "text/output/output_parser.h"
#include "text/tokenizer.h"

namespace ds::server {

struct BuiltPrompt {
  std::string text;  // rendered template; empty for id prompts
  std::vector<int32_t> ids;
  text::OutputParserOptions parser_options;
  std::vector<PromptMessage> messages;   // chat prompts: where each message lies in `ids`
  std::vector<int64_t> boundary_positions;  // where the engine snapshots inside the prompt
  int64_t continuity_tokens = 0;  // leading ids taken from an earlier prompt or reply
  // Text the prompt already holds of the reply: the opening of a tool call that tool_choice
  // "required" or a named function forces. The output parser reads it before the first token.
  std::string forced_output;
};

// OutOfRange for a prompt of `tokens` (or at least that many) that a context of `context` tokens
// cannot hold, naming the --ctx-size that would: every API's error carries only the message.
Status PromptTooLongError(int64_t tokens, bool at_least, int64_t context);

class PromptBuilder {
 public:
  // REQUIRES: tokenizer outlives the builder. Prompts whose text is certain to exceed
  // `max_prompt_tokens` are refused before they are tokenised. `chat_template` replaces the
  // model's when not empty.
  static StatusOr<std::unique_ptr<PromptBuilder>> Create(const text::Tokenizer* tokenizer,
                                                        int64_t max_prompt_tokens,
                                                        const std::string& chat_template = "");

  StatusOr<BuiltPrompt> Build(const api::ChatRequest& request) const;
  // Remembers what a chat prompt and its reply tokenised to, for the next turn's prompt.
  void RecordReply(const BuiltPrompt& prompt, std::span<const int32_t> generated_ids) const;
  // Remembers what the server tokenised before a restart (ContinuityMemo::Seed), newest first.
  void SeedContinuity(const std::vector<std::vector<int32_t>>& sequences) const;
  const text::Tokenizer& tokenizer() const { return *tokenizer_; }

 private:
  PromptBuilder(const text::Tokenizer* tokenizer, text::jinja::Template chat_template,
                bool xml_tool_calls, int64_t max_prompt_tokens);
  StatusOr<BuiltPrompt> BuildChat(const api::ChatRequest& request) const;
  // OutOfRange when `text` cannot fit the context whatever it tokenises to.
  Status CheckLength(std::string_view text) const;

  const text::Tokenizer* tokenizer_;
  text::jinja::Template chat_template_;
  bool xml_tool_calls_;  // Qwen3.5 / Qwen3-Coder style, else the JSON form
  int64_t max_prompt_tokens_;
  std::unique_ptr<ContinuityMemo> memo_;
};

}  // namespace ds::server
