#include "text/jinja/jinja.h"

#include "text/jinja/parser.h"
#include "text/jinja/runtime.h"

namespace ds::text::jinja {
namespace {

StatusOr<std::string> RenderProgram(const Program& program, Value context) {
  if (!context.is_dict()) return InvalidArgumentError("template context must be a JSON object");
  Evaluator evaluator(program, std::move(context));
  return evaluator.Render();
}

}  // namespace

const std::string_view kChatMlTemplate =
    "{%- for message in messages -%}\n"
    "{{- '<|im_start|>' ~ message.role ~ '\\n' -}}\n"
    "{%- if message.content is string -%}\n"
    "{{- message.content -}}\n"
    "{%- elif message.content is iterable and message.content is not mapping -%}\n"
    "{%- for part in message.content if part.text is defined -%}{{- part.text -}}{%- endfor -%}\n"
    "{%- endif -%}\n"
    "{{- '<|im_end|>\\n' -}}\n"
    "{%- endfor -%}\n"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}\n";

StatusOr<Template> Template::Parse(std::string_view source, const ParseOptions& options) {
  LexOptions lex;
  lex.trim_blocks = options.trim_blocks;
  lex.lstrip_blocks = options.lstrip_blocks;
  DS_ASSIGN_OR_RETURN(std::shared_ptr<const Program> program, ParseProgram(source, lex));
  return Template(std::move(program));
}

StatusOr<std::string> Template::Render(const nlohmann::ordered_json& context) const {
  return RenderProgram(*program_, FromJson(context));
}

StatusOr<std::string> Template::Render(const nlohmann::json& context) const {
  return RenderProgram(*program_, FromJson(context));
}

StatusOr<std::string> RenderChat(const Template& tmpl, const nlohmann::ordered_json& messages,
                                 const nlohmann::ordered_json& tools, bool add_generation_prompt,
                                 const nlohmann::ordered_json& extra_context) {
  if (!extra_context.is_null() && !extra_context.is_object()) {
    return InvalidArgumentError("extra chat template context must be a JSON object");
  }
  nlohmann::ordered_json context = nlohmann::ordered_json::object();
  context["messages"] = messages;
  if (!tools.is_null() && !tools.empty()) context["tools"] = tools;
  context["add_generation_prompt"] = add_generation_prompt;
  if (extra_context.is_object()) {
    for (auto it = extra_context.begin(); it != extra_context.end(); ++it) {
      context[it.key()] = it.value();
    }
  }
  return tmpl.Render(context);
}

StatusOr<std::string> RenderChatTemplate(std::string_view source,
                                         const nlohmann::ordered_json& messages,
                                         const nlohmann::ordered_json& tools,
                                         bool add_generation_prompt,
                                         const nlohmann::ordered_json& extra_context) {
  DS_ASSIGN_OR_RETURN(Template tmpl, Template::Parse(source));
  return RenderChat(tmpl, messages, tools, add_generation_prompt, extra_context);
}

StatusOr<std::string> RenderChatTemplate(std::string_view source, const nlohmann::json& messages,
                                         const nlohmann::json& tools, bool add_generation_prompt,
                                         const nlohmann::json& extra_context) {
  return RenderChatTemplate(source, nlohmann::ordered_json(messages),
                            nlohmann::ordered_json(tools), add_generation_prompt,
                            nlohmann::ordered_json(extra_context));
}

}  // namespace ds::text::jinja
