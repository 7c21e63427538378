#include "api/request_common.h"

#include <charconv>
#include <limits>
#include <map>

#include "api/json_fields.h"
#include "base/json_depth.h"

namespace ds::api {
namespace {

bool IsTextPartType(const std::string& type) {
  return type == "text" || type == "input_text" || type == "output_text";
}

bool IsImagePartType(const std::string& type) {
  return type == "image" || type == "image_url" || type == "input_image";
}

Status ParseLogitBias(const Json& body, ChatRequest* req) {
  DS_ASSIGN_OR_RETURN(const Json* bias, FindObject(body, "logit_bias", ""));
  if (bias == nullptr) return OkStatus();
  for (const auto& [key, value] : bias->items()) {
    int32_t id = 0;
    auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
    if (ec != std::errc() || end != key.data() + key.size() || id < 0) {
      return InvalidArgumentError("logit_bias keys must be token ids, got \"" + key + "\"");
    }
    float b = 0;
    DS_RETURN_IF_ERROR(ReadFloat(*bias, key, "logit_bias", -100, 100, &b));
    req->sampling.logit_bias.emplace_back(id, b);
  }
  return OkStatus();
}

}  // namespace

Status ParseOpenAIToolChoice(const Json& body, ChatRequest* req) {
  const Json* choice = FindField(body, "tool_choice");
  if (choice == nullptr) return OkStatus();
  if (choice->is_string()) {
    const std::string& mode = choice->get_ref<const std::string&>();
    if (mode == "auto") {
      req->tool_choice.mode = ToolChoice::Mode::kAuto;
    } else if (mode == "none") {
      req->tool_choice.mode = ToolChoice::Mode::kNone;
    } else if (mode == "required") {
      req->tool_choice.mode = ToolChoice::Mode::kRequired;
    } else {
      return InvalidArgumentError(
          "tool_choice must be \"auto\", \"none\", \"required\" or a "
          "function");
    }
    return OkStatus();
  }
  if (!choice->is_object()) {
    return InvalidArgumentError("tool_choice must be a string or an object");
  }
  std::string name;
  if (const Json* function = FindField(*choice, "function"); function != nullptr) {
    if (!function->is_object())
      return InvalidArgumentError("tool_choice.function must be an object");
    DS_RETURN_IF_ERROR(RequireString(*function, "name", "tool_choice.function", &name));
  } else {
    DS_RETURN_IF_ERROR(RequireString(*choice, "name", "tool_choice", &name));
  }
  req->tool_choice = ToolChoice{ToolChoice::Mode::kFunction, name};
  return OkStatus();
}

Status CheckBodyIsObject(const Json& body) {
  if (!body.is_object()) return InvalidArgumentError("the request body must be a JSON object");
  return OkStatus();
}

Status ParseSamplingFields(const Json& body, bool allow_logit_bias, ChatRequest* req) {
  engine::SamplingParams& s = req->sampling;
  constexpr double kMaxFloat = std::numeric_limits<float>::max();
  constexpr int64_t kMaxInt = std::numeric_limits<int64_t>::max();
  DS_RETURN_IF_ERROR(ReadFloat(body, "temperature", "", 0, kMaxFloat, &s.temperature));
  DS_RETURN_IF_ERROR(ReadFloat(body, "top_p", "", 0, 1, &s.top_p));
  DS_RETURN_IF_ERROR(ReadInt(body, "top_k", "", -1, kMaxInt, &s.top_k));
  DS_RETURN_IF_ERROR(ReadFloat(body, "min_p", "", 0, 1, &s.min_p));
  int64_t seed = -1;
  DS_RETURN_IF_ERROR(
      ReadInt(body, "seed", "", std::numeric_limits<int64_t>::min(), kMaxInt, &seed));
  if (FindField(body, "seed") != nullptr) s.seed = static_cast<uint64_t>(seed);
  DS_RETURN_IF_ERROR(ReadFloat(body, "presence_penalty", "", -2, 2, &s.presence_penalty));
  DS_RETURN_IF_ERROR(ReadFloat(body, "frequency_penalty", "", -2, 2, &s.frequency_penalty));
  DS_RETURN_IF_ERROR(ReadFloat(body, "repeat_penalty", "", 0, kMaxFloat, &s.repeat_penalty));
  DS_RETURN_IF_ERROR(ReadFloat(body, "repetition_penalty", "", 0, kMaxFloat, &s.repeat_penalty));
  if (allow_logit_bias) DS_RETURN_IF_ERROR(ParseLogitBias(body, req));
  DS_RETURN_IF_ERROR(ReadBool(body, "ignore_eos", "", &req->ignore_eos));
  return OkStatus();
}

Status ParseStopField(const Json& body, std::string_view key, ChatRequest* req) {
  const Json* stop = FindField(body, key);
  if (stop == nullptr) return OkStatus();
  if (stop->is_string()) {
    if (!stop->get<std::string>().empty()) req->stop.push_back(stop->get<std::string>());
    return OkStatus();
  }
  if (!stop->is_array()) {
    return InvalidArgumentError(std::string(key) + " must be a string or an array of strings");
  }
  for (size_t i = 0; i < stop->size(); ++i) {
    if (!(*stop)[i].is_string()) {
      return InvalidArgumentError(IndexPath(key, i) + " must be a string");
    }
    if (!(*stop)[i].get<std::string>().empty()) req->stop.push_back((*stop)[i]);
  }
  return OkStatus();
}

StatusOr<std::string> ContentText(const Json& content, std::string_view path) {
  if (content.is_null()) return std::string();
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) {
    return InvalidArgumentError(std::string(path) +
                                " must be a string or an array of content parts");
  }
  std::string text;
  for (size_t i = 0; i < content.size(); ++i) {
    const Json& part = content[i];
    std::string part_path = IndexPath(path, i);
    if (part.is_string()) {  // some clients send bare strings as parts
      text += part.get<std::string>();
      continue;
    }
    if (!part.is_object()) return InvalidArgumentError(part_path + " must be an object");
    std::string type;
    DS_RETURN_IF_ERROR(RequireString(part, "type", part_path, &type));
    if (IsImagePartType(type)) {
      return InvalidArgumentError(part_path + " is an image; the loaded model reads text only");
    }
    if (!IsTextPartType(type)) {
      return InvalidArgumentError(part_path + ".type \"" + type + "\" is not supported here");
    }
    std::string part_text;
    DS_RETURN_IF_ERROR(RequireString(part, "text", part_path, &part_text));
    text += part_text;
  }
  return text;
}

Json ArgumentsValue(const std::string& arguments_text) {
  if (!JsonDepthWithin(arguments_text)) return arguments_text;
  Json parsed = Json::parse(arguments_text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_object()) return parsed;
  return arguments_text;
}

Json FunctionTool(const std::string& name, const Json* description, const Json* parameters) {
  Json function = Json::object();
  function["name"] = name;
  if (description != nullptr) function["description"] = *description;
  function["parameters"] = parameters != nullptr
                               ? *parameters
                               : Json{{"type", "object"}, {"properties", Json::object()}};
  return Json{{"type", "function"}, {"function", std::move(function)}};
}

void NormalizeMessages(ChatRequest* req) {
  Json& messages = req->messages;
  // Templates such as Qwen3.5's refuse a second system message, and clients (Codex) send
  // several developer messages up front: they are one system prompt.
  size_t leading = 0;
  while (leading < messages.size() && messages[leading]["role"] == "system") ++leading;
  if (leading > 1) {
    std::string merged;
    for (size_t i = 0; i < leading; ++i) {
      if (i > 0) merged += "\n\n";
      merged += messages[i]["content"].get<std::string>();
    }
    Json rest = Json::array();
    rest.push_back(Json{{"role", "system"}, {"content", std::move(merged)}});
    for (size_t i = leading; i < messages.size(); ++i) rest.push_back(std::move(messages[i]));
    messages = std::move(rest);
  }
  std::map<std::string, std::string> call_names;
  for (Json& message : messages) {
    if (message["role"] == "assistant" && message.contains("tool_calls")) {
      for (const Json& call : message["tool_calls"]) {
        call_names[call["id"].get<std::string>()] = call["function"]["name"].get<std::string>();
      }
    } else if (message["role"] == "tool" && !message.contains("name")) {
      auto it = call_names.find(message["tool_call_id"].get<std::string>());
      if (it != call_names.end()) message["name"] = it->second;
    }
  }
}

}  // namespace ds::api
