#include "server/prompt_builder.h"

#include "server/late_system_messages.h"

namespace ds::server {
namespace {

bool EndsWith(const std::string& text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Late system messages as user messages, for templates that refuse them and are not ChatML-like
// (late_system_messages.h covers the others).
void DemoteLateSystemMessages(api::Json* messages) {
  for (size_t i = 1; i < messages->size(); ++i) {
    api::Json& message = (*messages)[i];
    if (message.value("role", "") == "system") message["role"] = "user";
  }
}

// The start of the reply that tool_choice forces: the opening of a call (of the named function),
// after closing the reasoning block the generation prompt opened, so the model can only go on
// with a call. Empty when nothing is forced.
std::string ForcedToolCallOpening(const api::ChatRequest& request, bool in_reasoning,
                                  bool think_newline, bool xml) {
  const api::ToolChoice& choice = request.tool_choice;
  if (!request.tools.is_array() || request.tools.empty() ||
      (choice.mode != api::ToolChoice::Mode::kRequired &&
       choice.mode != api::ToolChoice::Mode::kFunction)) {
    return "";
  }
  // As the templates render a turn with empty reasoning: "<think>\n\n</think>\n\n".
  std::string text = "<tool_call>\n";
  if (in_reasoning) text = (think_newline ? "\n</think>\n\n" : "\n\n</think>\n\n") + text;
  if (choice.mode == api::ToolChoice::Mode::kFunction) {
    text += xml ? "<function=" + choice.function_name + ">\n"
                : "{\"name\": " + api::Json(choice.function_name).dump() + ", \"arguments\": ";
  }
  return text;
}

std::string TokenText(const text::Tokenizer& tokenizer, int32_t id) {
  if (id < 0 || id >= tokenizer.num_tokens()) return "";
  return tokenizer.TokenToPiece(id, /*render_special=*/true);
}

}  // namespace

PromptBuilder::PromptBuilder(const text::Tokenizer* tokenizer,
                             text::jinja::Template chat_template, bool xml_tool_calls,
                             int64_t max_prompt_tokens)
    : tokenizer_(tokenizer), chat_template_(std::move(chat_template)),
      xml_tool_calls_(xml_tool_calls), max_prompt_tokens_(max_prompt_tokens),
      memo_(std::make_unique<ContinuityMemo>(tokenizer)) {}

StatusOr<std::unique_ptr<PromptBuilder>> PromptBuilder::Create(const text::Tokenizer* tokenizer,
                                                               int64_t max_prompt_tokens,
                                                               const std::string& chat_template) {
  std::string source = chat_template.empty() ? tokenizer->vocab().chat_template : chat_template;
  if (source.empty()) source = text::jinja::kChatMlTemplate;
  StatusOr<text::jinja::Template> parsed = text::jinja::Template::Parse(source);
  if (!parsed.ok()) {
    return InvalidArgumentError(std::string(chat_template.empty() ? "the model's" : "the given") +
                                " chat template does not parse: " + parsed.status().message() +
                                (chat_template.empty() ? " (--chat-template FILE replaces it)"
                                                       : ""));
  }
  bool xml = source.find("<function=") != std::string::npos;
  return std::unique_ptr<PromptBuilder>(
      new PromptBuilder(tokenizer, std::move(parsed).value(), xml, max_prompt_tokens));
}

Status PromptTooLongError(int64_t tokens, bool at_least, int64_t context) {
  // Room for a reply too, in whole thousands.
  const int64_t needed = (tokens + 4096 + 1023) / 1024 * 1024;
  return OutOfRangeError("the prompt has " + std::string(at_least ? "at least " : "") +
                         std::to_string(tokens) + " tokens, but the context size is " +
                         std::to_string(context) + ": start the server with --ctx-size " +
                         std::to_string(needed) + " or more");
}

Status PromptBuilder::CheckLength(std::string_view text) const {
  const int64_t at_least = tokenizer_->MinTokens(text);
  if (at_least < max_prompt_tokens_) return OkStatus();
  return PromptTooLongError(at_least, /*at_least=*/true, max_prompt_tokens_);
}

bool DeclaresTool(const api::Json& tools, const std::string& name) {
  if (!tools.is_array()) return false;
  for (const api::Json& tool : tools) {
    const api::Json* function = tool.contains("function") ? &tool["function"] : nullptr;
    if (function != nullptr && function->value("name", "") == name) return true;
  }
  return false;
}

StatusOr<BuiltPrompt> PromptBuilder::BuildChat(const api::ChatRequest& request) const {
  if (request.tool_choice.mode == api::ToolChoice::Mode::kFunction &&
      !DeclaresTool(request.tools, request.tool_choice.function_name)) {
    return InvalidArgumentError("tool_choice names the function '" +
                                request.tool_choice.function_name +
                                "', which is not among the request's tools");
  }
  api::Json context = request.template_kwargs.is_object() ? request.template_kwargs
                                                          : api::Json::object();
  context["messages"] = request.messages;
  if (request.tools.is_array() && !request.tools.empty() &&
      request.tool_choice.mode != api::ToolChoice::Mode::kNone) {
    context["tools"] = request.tools;
  }
  context["add_generation_prompt"] = request.add_generation_prompt;
  context["bos_token"] = TokenText(*tokenizer_, tokenizer_->vocab().bos_id);
  context["eos_token"] = TokenText(*tokenizer_, tokenizer_->vocab().eos_id);
  StatusOr<std::string> rendered = chat_template_.Render(context);
  if (!rendered.ok()) {
    const api::Json original = context["messages"];
    const std::vector<LateSystemMessage> late = StandInLateSystemMessages(&context["messages"]);
    if (!late.empty()) {
      rendered = chat_template_.Render(context);
      // A template that is not ChatML-like: the late messages as user messages, as a last resort.
      if (rendered.ok() && !RestoreLateSystemMessages(late, &*rendered)) {
        context["messages"] = original;
        DemoteLateSystemMessages(&context["messages"]);
        rendered = chat_template_.Render(context);
      }
    }
  }
  if (!rendered.ok()) {
    return InvalidArgumentError("the chat template failed on this request: " +
                                rendered.status().message());
  }
  BuiltPrompt prompt;
  prompt.text = std::move(rendered).value();
  if (request.continue_final_message) {
    // Continue the last assistant message: drop what the template closed it with.
    size_t end = prompt.text.rfind("<|im_end|>");
    if (end != std::string::npos) prompt.text.resize(end);
  }
  const bool think_newline = EndsWith(prompt.text, "<think>\n");
  const bool in_reasoning = think_newline || EndsWith(prompt.text, "<think>");
  if (request.add_generation_prompt && !request.continue_final_message) {
    prompt.forced_output =
        ForcedToolCallOpening(request, in_reasoning, think_newline, xml_tool_calls_);
    prompt.text += prompt.forced_output;
  }
  DS_RETURN_IF_ERROR(CheckLength(prompt.text));
  prompt.ids = memo_->Encode(prompt.text, &prompt.continuity_tokens);
  prompt.messages = FindMessages(prompt.ids, *tokenizer_);
  prompt.boundary_positions =
      SnapshotBoundaries(prompt.messages, static_cast<int64_t>(prompt.ids.size()));
  text::OutputParserOptions& parser = prompt.parser_options;
  parser.starts_in_reasoning = in_reasoning;
  // With tool_choice "none" the model saw no tools, and markup it writes anyway is content.
  const bool calls = request.tool_choice.mode != api::ToolChoice::Mode::kNone;
  parser.xml_tool_calls = calls && xml_tool_calls_;
  parser.json_tool_calls = calls && !xml_tool_calls_;
  parser.tools = request.tools;
  return prompt;
}

void PromptBuilder::RecordReply(const BuiltPrompt& prompt,
                                std::span<const int32_t> generated_ids) const {
  memo_->Record(prompt.text, prompt.ids, generated_ids);
}

void PromptBuilder::SeedContinuity(const std::vector<std::vector<int32_t>>& sequences) const {
  // Oldest first, so that the newest stay when there are more than the memo keeps.
  for (auto it = sequences.rbegin(); it != sequences.rend(); ++it) memo_->Seed(*it);
}

StatusOr<BuiltPrompt> PromptBuilder::Build(const api::ChatRequest& request) const {
  if (request.api != api::ApiKind::kCompletions) return BuildChat(request);
  BuiltPrompt prompt;
  if (request.prompt_is_ids) {
    prompt.ids = request.prompt_ids;
  } else {
    prompt.text = request.prompt_text;
    DS_RETURN_IF_ERROR(CheckLength(prompt.text));
    prompt.ids = tokenizer_->Encode(prompt.text, /*add_special=*/true, /*parse_special=*/true);
  }
  return prompt;
}

}  // namespace ds::server
