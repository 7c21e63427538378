// ParseResponsesRequest: see openai_request.h.
#include <limits>
#include <string>

#include "api/json_fields.h"
#include "api/openai_request.h"
#include "api/request_common.h"

namespace ds::api {
namespace {

// Builds the message list from input items. A reasoning item opens the next assistant turn;
// function_call items join the assistant message they follow.
class InputItemReader {
 public:
  explicit InputItemReader(ChatRequest* req) : req_(req) {}

  Status Read(const Json& item, const std::string& path) {
    if (!item.is_object()) return InvalidArgumentError(path + " must be an object");
    std::string type = "message";  // EasyInputMessage may omit the type
    DS_RETURN_IF_ERROR(ReadString(item, "type", path, &type));
    if (type == "message") return ReadMessage(item, path);
    if (type == "function_call") return ReadFunctionCall(item, path);
    if (type == "function_call_output") return ReadFunctionCallOutput(item, path);
    if (type == "reasoning") return ReadReasoning(item, path);
    return InvalidArgumentError(FieldPath(path, "type") + " \"" + type +
                                "\" is not supported here");
  }

 private:
  Status ReadMessage(const Json& item, const std::string& path) {
    std::string role;
    DS_RETURN_IF_ERROR(RequireString(item, "role", path, &role));
    if (role == "developer") role = "system";
    if (role != "system" && role != "user" && role != "assistant") {
      return InvalidArgumentError(FieldPath(path, "role") +
                                  " must be one of user, system, developer, assistant");
    }
    const Json* content = FindField(item, "content");
    DS_ASSIGN_OR_RETURN(std::string text,
                        ContentText(content ? *content : Json(), FieldPath(path, "content")));
    if (role == "assistant") {
      AssistantMessage(/*joinable=*/false)["content"] = std::move(text);
    } else {
      req_->messages.push_back(Json{{"role", role}, {"content", std::move(text)}});
    }
    return OkStatus();
  }

  Status ReadFunctionCall(const Json& item, const std::string& path) {
    std::string call_id, name, arguments;
    DS_RETURN_IF_ERROR(RequireString(item, "call_id", path, &call_id));
    DS_RETURN_IF_ERROR(RequireString(item, "name", path, &name));
    DS_RETURN_IF_ERROR(ReadString(item, "arguments", path, &arguments));
    Json& message = AssistantMessage(/*joinable=*/true);
    if (!message.contains("tool_calls")) message["tool_calls"] = Json::array();
    message["tool_calls"].push_back(
        Json{{"id", call_id},
             {"type", "function"},
             {"function", {{"name", name}, {"arguments", ArgumentsValue(arguments)}}}});
    return OkStatus();
  }

  Status ReadFunctionCallOutput(const Json& item, const std::string& path) {
    std::string call_id;
    DS_RETURN_IF_ERROR(RequireString(item, "call_id", path, &call_id));
    const Json* output = FindField(item, "output");
    DS_ASSIGN_OR_RETURN(std::string text,
                        ContentText(output ? *output : Json(), FieldPath(path, "output")));
    req_->messages.push_back(
        Json{{"role", "tool"}, {"tool_call_id", call_id}, {"content", std::move(text)}});
    return OkStatus();
  }

  // Reasoning text comes as content (reasoning_text parts) or, summarised, as summary parts.
  Status ReadReasoning(const Json& item, const std::string& path) {
    std::string text;
    for (const char* key : {"content", "summary"}) {
      DS_ASSIGN_OR_RETURN(const Json* parts, FindArray(item, key, path));
      if (parts == nullptr || !text.empty()) continue;
      for (size_t i = 0; i < parts->size(); ++i) {
        const Json& part = (*parts)[i];
        std::string part_path = IndexPath(FieldPath(path, key), i);
        if (!part.is_object()) return InvalidArgumentError(part_path + " must be an object");
        std::string part_text;
        DS_RETURN_IF_ERROR(ReadString(part, "text", part_path, &part_text));
        text += part_text;
      }
    }
    pending_reasoning_ += text;
    has_pending_reasoning_ = true;
    return OkStatus();
  }

  // The assistant message to write into: the last message when `joinable` and it is an
  // assistant message and no reasoning item started a new turn; otherwise a new one.
  Json& AssistantMessage(bool joinable) {
    Json& messages = req_->messages;
    if (joinable && !has_pending_reasoning_ && !messages.empty() &&
        messages.back()["role"] == "assistant") {
      return messages.back();
    }
    Json message{{"role", "assistant"}, {"content", ""}};
    if (!pending_reasoning_.empty()) message["reasoning_content"] = pending_reasoning_;
    pending_reasoning_.clear();
    has_pending_reasoning_ = false;
    messages.push_back(std::move(message));
    return messages.back();
  }

  ChatRequest* req_;
  std::string pending_reasoning_;
  bool has_pending_reasoning_ = false;
};

Status ParseInput(const Json& body, ChatRequest* req) {
  DS_RETURN_IF_ERROR(ReadString(body, "instructions", "", &req->instructions));
  if (!req->instructions.empty()) {
    req->messages.push_back(Json{{"role", "system"}, {"content", req->instructions}});
  }
  const Json* input = FindField(body, "input");
  if (input == nullptr) return InvalidArgumentError("input is required");
  if (input->is_string()) {
    req->messages.push_back(Json{{"role", "user"}, {"content", input->get<std::string>()}});
    return OkStatus();
  }
  if (!input->is_array()) {
    return InvalidArgumentError("input must be a string or an array of input items");
  }
  InputItemReader reader(req);
  for (size_t i = 0; i < input->size(); ++i) {
    DS_RETURN_IF_ERROR(reader.Read((*input)[i], IndexPath("input", i)));
  }
  if (req->messages.empty()) return InvalidArgumentError("input must not be empty");
  return OkStatus();
}

// A flat function tool {"type": "function", "name", "description", "parameters"}.
Status AddFunctionTool(const Json& tool, const std::string& path, const std::string& ns,
                       ChatRequest* req) {
  std::string name;
  DS_RETURN_IF_ERROR(RequireString(tool, "name", path, &name));
  DS_ASSIGN_OR_RETURN(const Json* parameters, FindObject(tool, "parameters", path));
  req->tools.push_back(FunctionTool(name, FindField(tool, "description"), parameters));
  if (!ns.empty()) req->tool_namespaces[name] = ns;
  return OkStatus();
}

Status ParseResponsesTools(const Json& body, ChatRequest* req) {
  DS_ASSIGN_OR_RETURN(const Json* tools, FindArray(body, "tools", ""));
  if (tools == nullptr) return OkStatus();
  req->tools = Json::array();
  for (size_t i = 0; i < tools->size(); ++i) {
    const Json& tool = (*tools)[i];
    std::string path = IndexPath("tools", i);
    if (!tool.is_object()) return InvalidArgumentError(path + " must be an object");
    std::string type;
    DS_RETURN_IF_ERROR(RequireString(tool, "type", path, &type));
    if (type == "function") {
      DS_RETURN_IF_ERROR(AddFunctionTool(tool, path, "", req));
    } else if (type == "namespace") {
      std::string ns;
      DS_RETURN_IF_ERROR(RequireString(tool, "name", path, &ns));
      DS_ASSIGN_OR_RETURN(const Json* members, FindArray(tool, "tools", path));
      for (size_t j = 0; members != nullptr && j < members->size(); ++j) {
        const Json& member = (*members)[j];
        std::string member_path = IndexPath(FieldPath(path, "tools"), j);
        if (!member.is_object()) return InvalidArgumentError(member_path + " must be an object");
        std::string member_type;
        DS_RETURN_IF_ERROR(ReadString(member, "type", member_path, &member_type));
        if (member_type == "function") {
          DS_RETURN_IF_ERROR(AddFunctionTool(member, member_path, ns, req));
        }
      }
    }
  }
  if (req->tools.empty()) req->tools = Json();
  return OkStatus();
}

Status ParseResponsesOptions(const Json& body, ChatRequest* req) {
  if (FindField(body, "previous_response_id") != nullptr) {
    return UnimplementedError(
        "previous_response_id is not supported: responses are not stored, "
        "send the whole conversation in input");
  }
  DS_ASSIGN_OR_RETURN(const Json* text, FindObject(body, "text", ""));
  if (text != nullptr) {
    DS_ASSIGN_OR_RETURN(const Json* format, FindObject(*text, "format", "text"));
    std::string type = "text";
    if (format != nullptr) DS_RETURN_IF_ERROR(ReadString(*format, "type", "text.format", &type));
    if (type != "text") return UnimplementedError("text.format \"" + type + "\" is not supported");
  }
  DS_ASSIGN_OR_RETURN(const Json* reasoning, FindObject(body, "reasoning", ""));
  if (reasoning != nullptr) {
    std::string effort;
    DS_RETURN_IF_ERROR(ReadString(*reasoning, "effort", "reasoning", &effort));
    if (effort == "none") req->template_kwargs["enable_thinking"] = false;
  }
  DS_ASSIGN_OR_RETURN(const Json* include, FindArray(body, "include", ""));
  for (size_t i = 0; include != nullptr && i < include->size(); ++i) {
    if ((*include)[i] == "message.output_text.logprobs") req->logprobs = true;
  }
  return ReadInt(body, "top_logprobs", "", 0, 20, &req->top_logprobs);
}

}  // namespace

StatusOr<ChatRequest> ParseResponsesRequest(const Json& body,
                                            const engine::SamplingParams& defaults) {
  DS_RETURN_IF_ERROR(CheckBodyIsObject(body));
  ChatRequest req;
  req.api = ApiKind::kResponses;
  req.sampling = defaults;
  DS_RETURN_IF_ERROR(ReadString(body, "model", "", &req.model));
  DS_RETURN_IF_ERROR(ParseInput(body, &req));
  DS_RETURN_IF_ERROR(ParseResponsesTools(body, &req));
  DS_RETURN_IF_ERROR(ParseOpenAIToolChoice(body, &req));
  DS_RETURN_IF_ERROR(ReadBool(body, "parallel_tool_calls", "", &req.parallel_tool_calls));
  DS_RETURN_IF_ERROR(ReadInt(body, "max_output_tokens", "", 1, std::numeric_limits<int64_t>::max(),
                             &req.max_tokens));
  DS_RETURN_IF_ERROR(ParseSamplingFields(body, /*allow_logit_bias=*/false, &req));
  DS_RETURN_IF_ERROR(ReadBool(body, "stream", "", &req.stream));
  DS_RETURN_IF_ERROR(ParseResponsesOptions(body, &req));
  NormalizeMessages(&req);
  return req;
}

}  // namespace ds::api
