// Turns a normalised chat request into prompt token ids: renders the model's chat template (or
// ChatML when the model has none) and tokenises the result, and tells the output parser what the
// template implies (generation starting inside <think>, which tool-call syntax the model uses).
// Thread safety: immutable after construction; Build() may run on any thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "api/types.h"
#include "base/status.h"
#include "text/jinja/jinja.h"
#include "text/output/output_parser.h"
#include "text/tokenizer.h"

namespace ds::server {

struct BuiltPrompt {
  std::string text;  // rendered template; empty for id prompts
  std::vector<int32_t> ids;
  text::OutputParserOptions parser_options;
};

class PromptBuilder {
 public:
  // REQUIRES: tokenizer outlives the builder.
  static StatusOr<std::unique_ptr<PromptBuilder>> Create(const text::Tokenizer* tokenizer);

  StatusOr<BuiltPrompt> Build(const api::ChatRequest& request) const;
  const text::Tokenizer& tokenizer() const { return *tokenizer_; }

 private:
  PromptBuilder(const text::Tokenizer* tokenizer, text::jinja::Template chat_template,
                bool xml_tool_calls);
  StatusOr<BuiltPrompt> BuildChat(const api::ChatRequest& request) const;

  const text::Tokenizer* tokenizer_;
  text::jinja::Template chat_template_;
  bool xml_tool_calls_;  // Qwen3.5 / Qwen3-Coder style, else the JSON form
};

}  // namespace ds::server
