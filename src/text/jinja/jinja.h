// Jinja2-compatible template engine for chat templates (HF tokenizer_config.json "chat_template",
// GGUF tokenizer.chat_template). Output is byte-identical to python3-jinja2 rendering through
// Hugging Face's environment: ImmutableSandboxedEnvironment(trim_blocks=True,
// lstrip_blocks=True) with loop controls, HF's tojson (json.dumps, ensure_ascii=False),
// raise_exception and strftime_now. No Python is involved at run time.
//
// Errors never escape as exceptions: syntax errors come from Parse as InvalidArgument naming the
// line and column; runtime errors (raise_exception, type errors, misuse of undefined values) come
// from Render as InvalidArgument "template error at line N: <message>"; a render that exceeds the
// work or output budget fails with ResourceExhausted.
//
// Key order: a dict renders (tojson, items, iteration) in the order of the JSON object it came
// from. nlohmann::json sorts object keys, so pass nlohmann::ordered_json to keep the order a
// client sent (HF keeps it; tool schemas rendered with tojson depend on it).
//
// Thread safety: a Template is immutable after Parse; Render may run concurrently on one Template.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace ds::text::jinja {

struct Program;

struct ParseOptions {
  bool trim_blocks = true;    // HF's setting; Jinja's own default is false
  bool lstrip_blocks = true;  // HF's setting; Jinja's own default is false
};

class Template {
 public:
  static StatusOr<Template> Parse(std::string_view source, const ParseOptions& options = {});

  // REQUIRES: nothing; a context that is not a JSON object is an InvalidArgument error.
  StatusOr<std::string> Render(const nlohmann::ordered_json& context) const;
  StatusOr<std::string> Render(const nlohmann::json& context) const;

 private:
  explicit Template(std::shared_ptr<const Program> program) : program_(std::move(program)) {}

  std::shared_ptr<const Program> program_;
};

// A ChatML template for models that ship none: <|im_start|>role\ncontent<|im_end|>\n per message
// (string content, or the text parts of a content list), plus the assistant header when
// add_generation_prompt is true.
extern const std::string_view kChatMlTemplate;

// Renders a chat the way HF's apply_chat_template does. The context holds `messages`, `tools`
// (only when non-null and non-empty), `add_generation_prompt`, then every entry of
// `extra_context` (an object or null; e.g. bos_token, eos_token, enable_thinking), which may
// override the others.
StatusOr<std::string> RenderChat(const Template& tmpl, const nlohmann::ordered_json& messages,
                                 const nlohmann::ordered_json& tools, bool add_generation_prompt,
                                 const nlohmann::ordered_json& extra_context);
// Parses `source` and renders as RenderChat does.
StatusOr<std::string> RenderChatTemplate(std::string_view source,
                                         const nlohmann::ordered_json& messages,
                                         const nlohmann::ordered_json& tools,
                                         bool add_generation_prompt,
                                         const nlohmann::ordered_json& extra_context);
// The same with nlohmann::json arguments (object keys then render in sorted order).
StatusOr<std::string> RenderChatTemplate(std::string_view source, const nlohmann::json& messages,
                                         const nlohmann::json& tools, bool add_generation_prompt,
                                         const nlohmann::json& extra_context);

}  // namespace ds::text::jinja
