#include "api/openai_request.h"

#include <limits>
#include <string>

#include "api/json_fields.h"
#include "api/request_common.h"

namespace ds::api {
namespace {

constexpr int64_t kMaxInt = std::numeric_limits<int64_t>::max();

StatusOr<Json> ParseAssistantToolCalls(const Json& calls, const std::string& path) {
  if (!calls.is_array()) return InvalidArgumentError(path + " must be an array");
  Json out = Json::array();
  for (size_t i = 0; i < calls.size(); ++i) {
    const Json& call = calls[i];
    std::string call_path = IndexPath(path, i);
    if (!call.is_object()) return InvalidArgumentError(call_path + " must be an object");
    std::string id;
    DS_RETURN_IF_ERROR(ReadString(call, "id", call_path, &id));
    DS_ASSIGN_OR_RETURN(const Json* function, FindObject(call, "function", call_path));
    std::string function_path = FieldPath(call_path, "function");
    if (function == nullptr) return InvalidArgumentError(function_path + " is required");
    std::string name;
    DS_RETURN_IF_ERROR(RequireString(*function, "name", function_path, &name));
    Json arguments = Json::object();
    if (const Json* args = FindField(*function, "arguments"); args != nullptr) {
      if (args->is_string()) {
        arguments = ArgumentsValue(args->get<std::string>());
      } else if (args->is_object()) {
        arguments = *args;
      } else {
        return InvalidArgumentError(FieldPath(function_path, "arguments") +
                                    " must be a string or an object");
      }
    }
    out.push_back(Json{{"id", id},
                       {"type", "function"},
                       {"function", {{"name", name}, {"arguments", std::move(arguments)}}}});
  }
  return out;
}

StatusOr<Json> ParseChatMessage(const Json& message, const std::string& path) {
  if (!message.is_object()) return InvalidArgumentError(path + " must be an object");
  std::string role;
  DS_RETURN_IF_ERROR(RequireString(message, "role", path, &role));
  if (role == "developer") role = "system";
  if (role != "system" && role != "user" && role != "assistant" && role != "tool") {
    return InvalidArgumentError(FieldPath(path, "role") +
                                " must be one of system, developer, user, assistant, tool");
  }
  const Json* content = FindField(message, "content");
  DS_ASSIGN_OR_RETURN(std::string text,
                      ContentText(content ? *content : Json(), FieldPath(path, "content")));
  Json out{{"role", role}, {"content", std::move(text)}};
  if (role == "assistant") {
    std::string reasoning;
    DS_RETURN_IF_ERROR(ReadString(message, "reasoning", path, &reasoning));
    DS_RETURN_IF_ERROR(ReadString(message, "reasoning_content", path, &reasoning));
    if (!reasoning.empty()) out["reasoning_content"] = std::move(reasoning);
    if (const Json* calls = FindField(message, "tool_calls"); calls != nullptr) {
      DS_ASSIGN_OR_RETURN(Json tool_calls,
                          ParseAssistantToolCalls(*calls, FieldPath(path, "tool_calls")));
      if (!tool_calls.empty()) out["tool_calls"] = std::move(tool_calls);
    }
  } else if (role == "tool") {
    std::string id;
    DS_RETURN_IF_ERROR(RequireString(message, "tool_call_id", path, &id));
    out["tool_call_id"] = std::move(id);
    std::string name;
    DS_RETURN_IF_ERROR(ReadString(message, "name", path, &name));
    if (!name.empty()) out["name"] = std::move(name);
  }
  return out;
}

Status ParseChatTools(const Json& body, ChatRequest* req) {
  DS_ASSIGN_OR_RETURN(const Json* tools, FindArray(body, "tools", ""));
  if (tools == nullptr || tools->empty()) return OkStatus();
  req->tools = Json::array();
  for (size_t i = 0; i < tools->size(); ++i) {
    const Json& tool = (*tools)[i];
    std::string path = IndexPath("tools", i);
    if (!tool.is_object()) return InvalidArgumentError(path + " must be an object");
    std::string type = "function";
    DS_RETURN_IF_ERROR(ReadString(tool, "type", path, &type));
    if (type != "function") {
      return InvalidArgumentError(FieldPath(path, "type") + " must be \"function\"");
    }
    DS_ASSIGN_OR_RETURN(const Json* function, FindObject(tool, "function", path));
    std::string function_path = FieldPath(path, "function");
    if (function == nullptr) return InvalidArgumentError(function_path + " is required");
    std::string name;
    DS_RETURN_IF_ERROR(RequireString(*function, "name", function_path, &name));
    DS_ASSIGN_OR_RETURN(const Json* parameters, FindObject(*function, "parameters", function_path));
    req->tools.push_back(FunctionTool(name, FindField(*function, "description"), parameters));
  }
  return OkStatus();
}

Status ParseStreamFields(const Json& body, ChatRequest* req) {
  DS_RETURN_IF_ERROR(ReadBool(body, "stream", "", &req->stream));
  DS_ASSIGN_OR_RETURN(const Json* options, FindObject(body, "stream_options", ""));
  if (options != nullptr) {
    DS_RETURN_IF_ERROR(ReadBool(*options, "include_usage", "stream_options", &req->include_usage));
  }
  int64_t n = 1;
  DS_RETURN_IF_ERROR(ReadInt(body, "n", "", 1, kMaxInt, &n));
  if (n != 1) return InvalidArgumentError("n must be 1: one choice per request is supported");
  return OkStatus();
}

Status ParseResponseFormat(const Json& body) {
  DS_ASSIGN_OR_RETURN(const Json* format, FindObject(body, "response_format", ""));
  if (format == nullptr) return OkStatus();
  std::string type = "text";
  DS_RETURN_IF_ERROR(ReadString(*format, "type", "response_format", &type));
  if (type != "text") {
    return UnimplementedError("response_format \"" + type + "\" is not supported");
  }
  return OkStatus();
}

Status ParseChatTemplateFields(const Json& body, ChatRequest* req) {
  DS_ASSIGN_OR_RETURN(const Json* kwargs, FindObject(body, "chat_template_kwargs", ""));
  if (kwargs != nullptr) req->template_kwargs.update(*kwargs);
  bool enable_thinking = true;
  if (FindField(body, "enable_thinking") != nullptr) {
    DS_RETURN_IF_ERROR(ReadBool(body, "enable_thinking", "", &enable_thinking));
    req->template_kwargs["enable_thinking"] = enable_thinking;
  }
  DS_RETURN_IF_ERROR(ReadBool(body, "add_generation_prompt", "", &req->add_generation_prompt));
  DS_RETURN_IF_ERROR(ReadBool(body, "continue_final_message", "", &req->continue_final_message));
  if (req->continue_final_message) req->add_generation_prompt = false;
  return OkStatus();
}

Status ParseChatMessages(const Json& body, ChatRequest* req) {
  DS_ASSIGN_OR_RETURN(const Json* messages, FindArray(body, "messages", ""));
  if (messages == nullptr) return InvalidArgumentError("messages is required");
  if (messages->empty()) return InvalidArgumentError("messages must not be empty");
  for (size_t i = 0; i < messages->size(); ++i) {
    DS_ASSIGN_OR_RETURN(Json message, ParseChatMessage((*messages)[i], IndexPath("messages", i)));
    req->messages.push_back(std::move(message));
  }
  return OkStatus();
}

Status ParseCompletionsPrompt(const Json& body, ChatRequest* req) {
  const Json* prompt = FindField(body, "prompt");
  if (prompt == nullptr) return InvalidArgumentError("prompt is required");
  const Json* one = prompt;
  if (prompt->is_array() && prompt->size() == 1 && !(*prompt)[0].is_number()) one = &(*prompt)[0];
  if (one->is_string()) {
    req->prompt_text = one->get<std::string>();
    return OkStatus();
  }
  if (!one->is_array()) {
    return InvalidArgumentError("prompt must be a string or an array of token ids");
  }
  for (size_t i = 0; i < one->size(); ++i) {
    const Json& id = (*one)[i];
    if (!id.is_number_integer() || id.get<int64_t>() < 0 ||
        id.get<int64_t>() > std::numeric_limits<int32_t>::max()) {
      return InvalidArgumentError(
          "prompt must be a string or an array of token ids (one prompt per request); " +
          IndexPath("prompt", i) + " is not a token id");
    }
    req->prompt_ids.push_back(static_cast<int32_t>(id.get<int64_t>()));
  }
  req->prompt_is_ids = true;
  return OkStatus();
}

}  // namespace

StatusOr<ChatRequest> ParseChatCompletionsRequest(const Json& body,
                                                  const engine::SamplingParams& defaults) {
  DS_RETURN_IF_ERROR(CheckBodyIsObject(body));
  ChatRequest req;
  req.api = ApiKind::kChatCompletions;
  req.sampling = defaults;
  DS_RETURN_IF_ERROR(ReadString(body, "model", "", &req.model));
  DS_RETURN_IF_ERROR(ParseChatMessages(body, &req));
  DS_RETURN_IF_ERROR(ParseChatTools(body, &req));
  DS_RETURN_IF_ERROR(ParseOpenAIToolChoice(body, &req));
  DS_RETURN_IF_ERROR(ReadBool(body, "parallel_tool_calls", "", &req.parallel_tool_calls));
  DS_RETURN_IF_ERROR(ReadInt(body, "max_tokens", "", 1, kMaxInt, &req.max_tokens));
  DS_RETURN_IF_ERROR(ReadInt(body, "max_completion_tokens", "", 1, kMaxInt, &req.max_tokens));
  DS_RETURN_IF_ERROR(ParseStopField(body, "stop", &req));
  DS_RETURN_IF_ERROR(ParseSamplingFields(body, /*allow_logit_bias=*/true, &req));
  DS_RETURN_IF_ERROR(ParseStreamFields(body, &req));
  DS_RETURN_IF_ERROR(ReadBool(body, "logprobs", "", &req.logprobs));
  DS_RETURN_IF_ERROR(ReadInt(body, "top_logprobs", "", 0, 20, &req.top_logprobs));
  DS_RETURN_IF_ERROR(ParseResponseFormat(body));
  DS_RETURN_IF_ERROR(ParseChatTemplateFields(body, &req));
  NormalizeMessages(&req);
  return req;
}

StatusOr<ChatRequest> ParseCompletionsRequest(const Json& body,
                                              const engine::SamplingParams& defaults) {
  DS_RETURN_IF_ERROR(CheckBodyIsObject(body));
  ChatRequest req;
  req.api = ApiKind::kCompletions;
  req.sampling = defaults;
  req.add_generation_prompt = false;
  DS_RETURN_IF_ERROR(ReadString(body, "model", "", &req.model));
  DS_RETURN_IF_ERROR(ParseCompletionsPrompt(body, &req));
  // OpenAI's default is 16 tokens; the whole context is a kinder default for local use.
  DS_RETURN_IF_ERROR(ReadInt(body, "max_tokens", "", 0, kMaxInt, &req.max_tokens));
  DS_RETURN_IF_ERROR(ParseStopField(body, "stop", &req));
  DS_RETURN_IF_ERROR(ParseSamplingFields(body, /*allow_logit_bias=*/true, &req));
  DS_RETURN_IF_ERROR(ParseStreamFields(body, &req));
  DS_RETURN_IF_ERROR(ReadBool(body, "echo", "", &req.echo));
  if (FindField(body, "logprobs") != nullptr) {
    DS_RETURN_IF_ERROR(ReadInt(body, "logprobs", "", 0, 5, &req.top_logprobs));
    req.logprobs = true;
  }
  int64_t best_of = 1;
  DS_RETURN_IF_ERROR(ReadInt(body, "best_of", "", 1, 1, &best_of));
  if (FindField(body, "suffix") != nullptr) {
    return InvalidArgumentError("suffix (fill-in-the-middle) is not supported");
  }
  return req;
}

}  // namespace ds::api
