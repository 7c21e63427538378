// Drives one submitted request to its end: engine tokens -> UTF-8-safe text -> stop strings ->
// reasoning and tool-call events, reporting progress as it goes and the whole result at the end.
// A progress callback that returns false (the client went away) cancels the request, which the
// engine honours before its next token.
// Thread safety: one runner per request, on the request's HTTP thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "api/types.h"
#include "engine/engine.h"
#include "server/prompt_builder.h"
#include "text/output/output_parser.h"
#include "text/tokenizer.h"

namespace ds::server {

struct GenerationOutput {
  std::string text;  // everything generated up to any stop string (what completions return)
  text::ParsedOutput parsed;  // chat APIs: reasoning, content and tool calls
  std::vector<api::TokenInfo> tokens;  // when logprobs were requested
  std::vector<int32_t> generated_ids;  // every id the engine produced, past any stop string too
  api::FinishInfo finish;
  Status status;  // not ok when the engine failed mid-way
};

// Called with new text and the events it completed, and with the token that produced them
// (null when the text was released later, e.g. held back by a stop-string prefix).
using ProgressFn = std::function<bool(const std::string& text,
                                      const std::vector<text::OutputEvent>& events,
                                      const api::TokenInfo* token)>;

class GenerationRunner {
 public:
  GenerationRunner(const text::Tokenizer* tokenizer, const api::ChatRequest& request,
                   const BuiltPrompt& prompt, std::shared_ptr<engine::RequestHandle> handle);

  GenerationOutput Run(const ProgressFn& on_progress);

 private:
  api::TokenInfo MakeTokenInfo(const engine::TokenEvent& token) const;
  // Feeds released text to the parser; returns the events it completed.
  std::vector<text::OutputEvent> Parse(const std::string& text, bool at_end);
  api::FinishInfo MakeFinishInfo(const engine::DoneEvent& done) const;
  // Counts the token whose text completed `events` when it belongs to the reasoning block.
  void CountReasoning(const std::vector<text::OutputEvent>& events);

  const text::Tokenizer* tokenizer_;
  const api::ChatRequest& request_;
  const BuiltPrompt& prompt_;
  std::shared_ptr<engine::RequestHandle> handle_;
  std::unique_ptr<text::OutputParser> parser_;  // null for /v1/completions
  std::vector<text::OutputEvent> forced_events_;  // from prompt.forced_output, sent first
  GenerationOutput output_;
  bool stopped_early_ = false;  // a stop string matched, or the one call asked for is complete
  bool seen_reasoning_;  // the reply is or was in its reasoning block
  bool left_reasoning_;  // content or a tool call came after it
  int64_t reasoning_tokens_ = 0;
};

}  // namespace ds::server
