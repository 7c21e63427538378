#include "text/output/tool_schema.h"

#include <algorithm>

#include "base/json_depth.h"
#include "text/output/json_stream.h"

namespace ds::text {
namespace {

using Json = nlohmann::json;

void AddTypes(const Json& schema, std::vector<std::string>* types) {
  if (!schema.is_object()) return;
  if (auto it = schema.find("type"); it != schema.end()) {
    if (it->is_string()) types->push_back(it->get<std::string>());
    if (it->is_array()) {
      for (const Json& t : *it) {
        if (t.is_string()) types->push_back(t.get<std::string>());
      }
    }
  }
  for (const char* key : {"anyOf", "oneOf"}) {
    if (auto it = schema.find(key); it != schema.end() && it->is_array()) {
      for (const Json& alternative : *it) AddTypes(alternative, types);
    }
  }
}

bool Has(const std::vector<std::string>& types, std::string_view type) {
  return std::find(types.begin(), types.end(), type) != types.end();
}

std::string_view Trim(std::string_view s) {
  constexpr std::string_view kSpace = " \t\n\r";
  const size_t begin = s.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(kSpace) - begin + 1);
}

std::string Lower(std::string_view s) {
  std::string lower(s);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return lower;
}

bool MatchesType(const Json& value, const std::vector<std::string>& types) {
  return (value.is_number_integer() && Has(types, "integer")) ||
         (value.is_number() && Has(types, "number")) ||
         (value.is_object() && Has(types, "object")) || (value.is_array() && Has(types, "array"));
}

}  // namespace

ToolSchemas::ToolSchemas(const Json& tools) {
  if (!tools.is_array()) return;
  for (const Json& tool : tools) {
    if (!tool.is_object()) continue;
    const Json& function = tool.contains("function") ? tool["function"] : tool;
    if (!function.is_object() || !function.contains("name") || !function["name"].is_string()) {
      continue;
    }
    const Json* schema = nullptr;
    for (const char* key : {"parameters", "input_schema"}) {
      if (function.contains(key)) schema = &function[key];
    }
    auto& params = types_[function["name"].get<std::string>()];
    if (schema == nullptr || !schema->is_object() || !schema->contains("properties")) continue;
    const Json& properties = (*schema)["properties"];
    if (!properties.is_object()) continue;
    for (const auto& [name, property] : properties.items()) {
      std::vector<std::string> types;
      AddTypes(property, &types);
      params[name] = std::move(types);
    }
  }
}

std::vector<std::string> ToolSchemas::ParamTypes(std::string_view tool,
                                                 std::string_view param) const {
  auto t = types_.find(tool);
  if (t == types_.end()) return {};
  auto p = t->second.find(param);
  if (p == t->second.end()) return {};
  return p->second;
}

bool IsStringTyped(const std::vector<std::string>& types) {
  return types.empty() || Has(types, "string");
}

std::string XmlValueToJson(std::string_view raw, const std::vector<std::string>& types) {
  std::string json;
  if (!IsStringTyped(types)) {
    const std::string_view text = Trim(raw);
    const std::string lower = Lower(text);
    if (lower == "null" || text == "None") return "null";
    if (Has(types, "boolean") && (lower == "true" || lower == "false")) return lower;
    if (JsonDepthWithin(text)) {
      const Json value = Json::parse(text, nullptr, /*allow_exceptions=*/false);
      if (!value.is_discarded() && MatchesType(value, types)) return std::string(text);
    }
  }
  json.push_back('"');
  AppendJsonEscaped(raw, &json);
  json.push_back('"');
  return json;
}

}  // namespace ds::text
