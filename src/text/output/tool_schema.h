// Typing of XML-form tool-call arguments (Qwen3-Coder / Qwen3.5 `<parameter=K>V</parameter>`),
// whose values arrive as raw text: the request's tool schemas say which JSON type each value is.
//
// Conversion rules (those of the Qwen3-Coder reference parser, made stricter where it guesses):
// a parameter declared "string" (alone or among other types), or one the schemas do not know,
// stays the raw text as a JSON string. Otherwise the trimmed text becomes JSON when it is a
// value of a declared type: `null`/`None` for any non-string parameter (the Qwen3.5 template
// renders Python's None), `true`/`false` in any letter case for boolean (the template renders
// Python's True/False), a JSON integer for integer, any JSON number for number, JSON objects
// and arrays for object and array. Anything else falls back to the raw text as a JSON string.
// Thread safety: immutable after construction.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace ds::text {

class ToolSchemas {
 public:
  ToolSchemas() = default;
  // `tools`: an array of OpenAI tools ({"type": "function", "function": {"name", "parameters"}})
  // or flat ones ({"name", "parameters"} or Anthropic's {"name", "input_schema"}). Entries of
  // other shapes are ignored; a non-array gives no schemas.
  explicit ToolSchemas(const nlohmann::json& tools);

  // The JSON types declared for `param` of `tool` ("type" as a string or a list, or the types
  // of "anyOf"/"oneOf" alternatives); empty when unknown.
  std::vector<std::string> ParamTypes(std::string_view tool, std::string_view param) const;

 private:
  // tool name -> parameter name -> declared types
  std::map<std::string, std::map<std::string, std::vector<std::string>, std::less<>>, std::less<>>
      types_;
};

// True when a value of these declared types is streamed as a JSON string as it arrives.
bool IsStringTyped(const std::vector<std::string>& types);

// The JSON text of an XML parameter value (its one leading and trailing newline already
// removed) under the rules above.
std::string XmlValueToJson(std::string_view raw, const std::vector<std::string>& types);

}  // namespace ds::text
