#include "api/anthropic_request.h"

#include <limits>
#include <string>

#include "api/json_fields.h"
#include "api/request_common.h"

namespace ds::api {
namespace {

Status RefuseBlock(const std::string& path, const std::string& type) {
  if (type == "image" || type == "document") {
    return InvalidArgumentError(path + " is " + (type == "image" ? "an image" : "a document") +
                                "; the loaded model reads text only");
  }
  return InvalidArgumentError(FieldPath(path, "type") + " \"" + type + "\" is not supported here");
}

// Text of a tool_result's content: a string or an array of text blocks.
StatusOr<std::string> ToolResultText(const Json& block, const std::string& path) {
  const Json* content = FindField(block, "content");
  if (content == nullptr) return std::string();
  if (content->is_string()) return content->get<std::string>();
  std::string content_path = FieldPath(path, "content");
  if (!content->is_array()) {
    return InvalidArgumentError(content_path + " must be a string or an array of content blocks");
  }
  std::string text;
  for (size_t i = 0; i < content->size(); ++i) {
    const Json& part = (*content)[i];
    std::string part_path = IndexPath(content_path, i);
    if (!part.is_object()) return InvalidArgumentError(part_path + " must be an object");
    std::string type;
    DS_RETURN_IF_ERROR(RequireString(part, "type", part_path, &type));
    if (type != "text") return RefuseBlock(part_path, type);
    std::string part_text;
    DS_RETURN_IF_ERROR(RequireString(part, "text", part_path, &part_text));
    text += part_text;
  }
  return text;
}

// Appends the normalised messages of one Anthropic message with block content.
class BlockReader {
 public:
  BlockReader(const std::string& role, Json* messages) : role_(role), messages_(messages) {}

  Status Read(const Json& block, const std::string& path) {
    if (!block.is_object()) return InvalidArgumentError(path + " must be an object");
    std::string type;
    DS_RETURN_IF_ERROR(RequireString(block, "type", path, &type));
    if (type == "text") {
      std::string text;
      DS_RETURN_IF_ERROR(RequireString(block, "text", path, &text));
      text_ += text;
      return OkStatus();
    }
    if (role_ == "assistant") return ReadAssistantBlock(block, type, path);
    if (role_ == "user" && type == "tool_result") {
      std::string id;
      DS_RETURN_IF_ERROR(RequireString(block, "tool_use_id", path, &id));
      DS_ASSIGN_OR_RETURN(std::string content, ToolResultText(block, path));
      FlushText();
      messages_->push_back(
          Json{{"role", "tool"}, {"tool_call_id", id}, {"content", std::move(content)}});
      wrote_any_ = true;
      return OkStatus();
    }
    return RefuseBlock(path, type);
  }

  // Emits what is left; a message of tool results alone adds no user message, an empty one
  // still takes its turn.
  void Finish() {
    if (role_ == "assistant") {
      Json message{{"role", "assistant"}, {"content", text_}};
      if (has_reasoning_) message["reasoning_content"] = reasoning_;
      if (!tool_calls_.empty()) message["tool_calls"] = std::move(tool_calls_);
      messages_->push_back(std::move(message));
    } else if (text_.empty() && !wrote_any_) {
      messages_->push_back(Json{{"role", role_}, {"content", ""}});
    } else {
      FlushText();
    }
  }

 private:
  Status ReadAssistantBlock(const Json& block, const std::string& type, const std::string& path) {
    if (type == "thinking") {
      std::string thinking;
      DS_RETURN_IF_ERROR(ReadString(block, "thinking", path, &thinking));
      reasoning_ += thinking;
      has_reasoning_ = true;
      return OkStatus();
    }
    if (type == "redacted_thinking") return OkStatus();  // opaque to us
    if (type != "tool_use") return RefuseBlock(path, type);
    std::string id, name;
    DS_RETURN_IF_ERROR(RequireString(block, "id", path, &id));
    DS_RETURN_IF_ERROR(RequireString(block, "name", path, &name));
    DS_ASSIGN_OR_RETURN(const Json* input, FindObject(block, "input", path));
    tool_calls_.push_back(
        Json{{"id", id},
             {"type", "function"},
             {"function", {{"name", name}, {"arguments", input ? *input : Json::object()}}}});
    return OkStatus();
  }

  void FlushText() {
    if (!text_.empty()) {
      messages_->push_back(Json{{"role", role_}, {"content", text_}});
      wrote_any_ = true;
    }
    text_.clear();
  }

  std::string role_;
  Json* messages_;
  std::string text_;
  std::string reasoning_;
  bool has_reasoning_ = false;
  Json tool_calls_ = Json::array();
  bool wrote_any_ = false;
};

Status ParseMessage(const Json& message, const std::string& path, Json* out) {
  if (!message.is_object()) return InvalidArgumentError(path + " must be an object");
  std::string role;
  DS_RETURN_IF_ERROR(RequireString(message, "role", path, &role));
  if (role != "user" && role != "assistant" && role != "system") {
    return InvalidArgumentError(FieldPath(path, "role") + " must be \"user\" or \"assistant\"");
  }
  const Json* content = FindField(message, "content");
  std::string content_path = FieldPath(path, "content");
  if (content == nullptr) return InvalidArgumentError(content_path + " is required");
  if (content->is_string()) {
    out->push_back(Json{{"role", role}, {"content", content->get<std::string>()}});
    return OkStatus();
  }
  if (!content->is_array()) {
    return InvalidArgumentError(content_path + " must be a string or an array of content blocks");
  }
  BlockReader reader(role, out);
  for (size_t i = 0; i < content->size(); ++i) {
    DS_RETURN_IF_ERROR(reader.Read((*content)[i], IndexPath(content_path, i)));
  }
  reader.Finish();
  return OkStatus();
}

bool IsVolatile(const std::string& text, const std::vector<std::string>& prefixes) {
  for (const std::string& prefix : prefixes) {
    if (text.starts_with(prefix)) return true;
  }
  return false;
}

StatusOr<std::string> SystemText(const Json& body,
                                 const std::vector<std::string>& volatile_prefixes) {
  const Json* system = FindField(body, "system");
  if (system == nullptr) return std::string();
  if (system->is_string()) return system->get<std::string>();
  if (!system->is_array()) {
    return InvalidArgumentError("system must be a string or an array of text blocks");
  }
  std::string text;
  for (size_t i = 0; i < system->size(); ++i) {
    const Json& block = (*system)[i];
    std::string path = IndexPath("system", i);
    if (!block.is_object()) return InvalidArgumentError(path + " must be an object");
    std::string type;
    DS_RETURN_IF_ERROR(RequireString(block, "type", path, &type));
    if (type != "text") return InvalidArgumentError(FieldPath(path, "type") + " must be \"text\"");
    std::string block_text;
    DS_RETURN_IF_ERROR(RequireString(block, "text", path, &block_text));
    if (IsVolatile(block_text, volatile_prefixes)) continue;
    if (!text.empty()) text += "\n";
    text += block_text;
  }
  return text;
}

Status ParseMessages(const Json& body, const std::vector<std::string>& volatile_prefixes,
                     ChatRequest* req) {
  DS_ASSIGN_OR_RETURN(std::string system, SystemText(body, volatile_prefixes));
  // A block list left empty by the volatile rule means no system message at all.
  const Json* system_field = FindField(body, "system");
  if (system_field != nullptr && (system_field->is_string() || !system.empty())) {
    req->messages.push_back(Json{{"role", "system"}, {"content", std::move(system)}});
  }
  DS_ASSIGN_OR_RETURN(const Json* messages, FindArray(body, "messages", ""));
  if (messages == nullptr) return InvalidArgumentError("messages is required");
  if (messages->empty()) return InvalidArgumentError("messages must not be empty");
  for (size_t i = 0; i < messages->size(); ++i) {
    DS_RETURN_IF_ERROR(ParseMessage((*messages)[i], IndexPath("messages", i), &req->messages));
  }
  if (req->messages.back()["role"] == "assistant") {
    req->continue_final_message = true;
    req->add_generation_prompt = false;
  }
  return OkStatus();
}

Status ParseTools(const Json& body, ChatRequest* req) {
  DS_ASSIGN_OR_RETURN(const Json* tools, FindArray(body, "tools", ""));
  if (tools == nullptr) return OkStatus();
  req->tools = Json::array();
  for (size_t i = 0; i < tools->size(); ++i) {
    const Json& tool = (*tools)[i];
    std::string path = IndexPath("tools", i);
    if (!tool.is_object()) return InvalidArgumentError(path + " must be an object");
    std::string type = "custom";
    DS_RETURN_IF_ERROR(ReadString(tool, "type", path, &type));
    if (type != "custom") continue;  // Anthropic-defined tools: their schema is not ours to know
    std::string name;
    DS_RETURN_IF_ERROR(RequireString(tool, "name", path, &name));
    DS_ASSIGN_OR_RETURN(const Json* schema, FindObject(tool, "input_schema", path));
    if (schema == nullptr)
      return InvalidArgumentError(FieldPath(path, "input_schema") + " is required");
    req->tools.push_back(FunctionTool(name, FindField(tool, "description"), schema));
  }
  if (req->tools.empty()) req->tools = Json();
  return OkStatus();
}

Status ParseToolChoice(const Json& body, ChatRequest* req) {
  DS_ASSIGN_OR_RETURN(const Json* choice, FindObject(body, "tool_choice", ""));
  if (choice == nullptr) return OkStatus();
  std::string type;
  DS_RETURN_IF_ERROR(RequireString(*choice, "type", "tool_choice", &type));
  if (type == "auto") {
    req->tool_choice.mode = ToolChoice::Mode::kAuto;
  } else if (type == "any") {
    req->tool_choice.mode = ToolChoice::Mode::kRequired;
  } else if (type == "none") {
    req->tool_choice.mode = ToolChoice::Mode::kNone;
  } else if (type == "tool") {
    req->tool_choice.mode = ToolChoice::Mode::kFunction;
    DS_RETURN_IF_ERROR(
        RequireString(*choice, "name", "tool_choice", &req->tool_choice.function_name));
  } else {
    return InvalidArgumentError("tool_choice.type must be one of auto, any, tool, none");
  }
  bool disable_parallel = false;
  DS_RETURN_IF_ERROR(
      ReadBool(*choice, "disable_parallel_tool_use", "tool_choice", &disable_parallel));
  req->parallel_tool_calls = !disable_parallel;
  return OkStatus();
}

Status ParseThinking(const Json& body, ChatRequest* req) {
  DS_ASSIGN_OR_RETURN(const Json* thinking, FindObject(body, "thinking", ""));
  bool enable = false;
  if (thinking != nullptr) {
    std::string type;
    DS_RETURN_IF_ERROR(RequireString(*thinking, "type", "thinking", &type));
    if (type != "enabled" && type != "adaptive" && type != "disabled") {
      return InvalidArgumentError("thinking.type must be one of enabled, adaptive, disabled");
    }
    enable = type != "disabled";
  }
  req->template_kwargs["enable_thinking"] = enable;
  return OkStatus();
}

StatusOr<ChatRequest> ParseCommon(const Json& body, const AnthropicParseOptions& options,
                                  ApiKind api) {
  DS_RETURN_IF_ERROR(CheckBodyIsObject(body));
  ChatRequest req;
  req.api = api;
  req.sampling = options.defaults;
  DS_RETURN_IF_ERROR(ReadString(body, "model", "", &req.model));
  DS_RETURN_IF_ERROR(ParseMessages(body, options.volatile_system_prefixes, &req));
  DS_RETURN_IF_ERROR(ParseTools(body, &req));
  DS_RETURN_IF_ERROR(ParseToolChoice(body, &req));
  DS_RETURN_IF_ERROR(ParseThinking(body, &req));
  DS_RETURN_IF_ERROR(ParseStopField(body, "stop_sequences", &req));
  DS_RETURN_IF_ERROR(ReadFloat(body, "temperature", "", 0, 1, &req.sampling.temperature));
  DS_RETURN_IF_ERROR(ReadFloat(body, "top_p", "", 0, 1, &req.sampling.top_p));
  DS_RETURN_IF_ERROR(
      ReadInt(body, "top_k", "", -1, std::numeric_limits<int64_t>::max(), &req.sampling.top_k));
  DS_RETURN_IF_ERROR(ReadBool(body, "stream", "", &req.stream));
  NormalizeMessages(&req);
  return req;
}

}  // namespace

StatusOr<ChatRequest> ParseAnthropicMessagesRequest(const Json& body,
                                                    const AnthropicParseOptions& options) {
  DS_ASSIGN_OR_RETURN(ChatRequest req, ParseCommon(body, options, ApiKind::kAnthropicMessages));
  if (FindField(body, "max_tokens") == nullptr)
    return InvalidArgumentError("max_tokens is required");
  DS_RETURN_IF_ERROR(
      ReadInt(body, "max_tokens", "", 1, std::numeric_limits<int64_t>::max(), &req.max_tokens));
  return req;
}

StatusOr<ChatRequest> ParseAnthropicCountTokensRequest(const Json& body,
                                                       const AnthropicParseOptions& options) {
  return ParseCommon(body, options, ApiKind::kAnthropicCountTokens);
}

}  // namespace ds::api
