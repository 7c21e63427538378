#include "api/responses_response.h"

#include <utility>

#include "api/errors.h"
#include "api/output_common.h"

namespace ds::api {
namespace {

std::string ItemId(const char* prefix, const std::string& response_id, int output_index) {
  std::string_view base = response_id;
  if (base.starts_with("resp_")) base.remove_prefix(5);
  return std::string(prefix) + "_" + std::string(base) + "_" + std::to_string(output_index);
}

Json ToolChoiceJson(const ToolChoice& choice) {
  switch (choice.mode) {
    case ToolChoice::Mode::kAuto:
      return "auto";
    case ToolChoice::Mode::kNone:
      return "none";
    case ToolChoice::Mode::kRequired:
      return "required";
    case ToolChoice::Mode::kFunction:
      return Json{{"type", "function"}, {"name", choice.function_name}};
  }
  return "auto";
}

// The request's tools in the Responses API's flat function shape.
Json ToolsJson(const ChatRequest& req) {
  Json tools = Json::array();
  if (!req.tools.is_array()) return tools;
  for (const Json& tool : req.tools) {
    Json flat{{"type", "function"}, {"name", tool["function"]["name"]}};
    if (tool["function"].contains("description")) {
      flat["description"] = tool["function"]["description"];
    }
    flat["parameters"] = tool["function"]["parameters"];
    flat["strict"] = false;
    tools.push_back(std::move(flat));
  }
  return tools;
}

Json ResponseObject(const ChatRequest& req, const std::string& id, int64_t created) {
  return Json{{"id", id},
              {"object", "response"},
              {"created_at", created},
              {"status", "in_progress"},
              {"error", nullptr},
              {"incomplete_details", nullptr},
              {"instructions", req.instructions.empty() ? Json() : Json(req.instructions)},
              {"max_output_tokens", req.max_tokens > 0 ? Json(req.max_tokens) : Json()},
              {"model", req.model},
              {"output", Json::array()},
              {"parallel_tool_calls", req.parallel_tool_calls},
              {"previous_response_id", nullptr},
              {"reasoning", {{"effort", nullptr}, {"summary", nullptr}}},
              {"store", false},
              {"temperature", req.sampling.temperature},
              {"text", {{"format", {{"type", "text"}}}}},
              {"tool_choice", ToolChoiceJson(req.tool_choice)},
              {"tools", ToolsJson(req)},
              {"top_p", req.sampling.top_p},
              {"truncation", "disabled"},
              {"usage", nullptr},
              {"user", nullptr},
              {"metadata", Json::object()}};
}

// Sets status, incomplete_details, output, usage and timings of a finished response.
void FinishResponse(const FinishInfo& finish, Json output, Json* response) {
  bool incomplete = finish.reason != FinishInfo::Reason::kStop;
  (*response)["status"] = incomplete ? "incomplete" : "completed";
  if (incomplete) {
    (*response)["incomplete_details"] =
        Json{{"reason",
              finish.reason == FinishInfo::Reason::kLength ? Json("max_output_tokens") : Json()}};
  }
  (*response)["output"] = std::move(output);
  (*response)["usage"] = Json{{"input_tokens", finish.prompt_tokens},
                              {"input_tokens_details", {{"cached_tokens", finish.cached_tokens}}},
                              {"output_tokens", finish.completion_tokens},
                              {"output_tokens_details",
                               {{"reasoning_tokens", finish.reasoning_tokens}}},
                              {"total_tokens", finish.prompt_tokens + finish.completion_tokens}};
  (*response)["timings"] = TimingsJson(finish.timings);
}

const char* ItemStatus(const FinishInfo& finish) {
  return finish.reason == FinishInfo::Reason::kStop ? "completed" : "incomplete";
}

Json ReasoningPart(const std::string& text) {
  return Json{{"type", "reasoning_text"}, {"text", text}};
}

Json ReasoningItem(const std::string& id, Json content) {
  return Json{{"type", "reasoning"},
              {"id", id},
              {"summary", Json::array()},
              {"content", std::move(content)}};
}

Json OutputTextPart(const std::string& text, Json logprobs) {
  return Json{{"type", "output_text"},
              {"text", text},
              {"annotations", Json::array()},
              {"logprobs", std::move(logprobs)}};
}

Json MessageItem(const std::string& id, const char* status, Json content) {
  return Json{{"type", "message"},
              {"id", id},
              {"status", status},
              {"role", "assistant"},
              {"content", std::move(content)}};
}

Json FunctionCallItem(const std::string& id, const std::string& call_id, const std::string& name,
                      const std::string& arguments, const char* status,
                      const std::map<std::string, std::string>& namespaces) {
  Json item{{"type", "function_call"}, {"id", id},        {"call_id", call_id}, {"name", name},
            {"arguments", arguments},  {"status", status}};
  auto it = namespaces.find(name);
  if (it != namespaces.end()) item["namespace"] = it->second;
  return item;
}

Json LogprobsJson(const std::vector<TokenInfo>& tokens, int64_t top_k) {
  Json out = Json::array();
  for (const TokenInfo& token : tokens) out.push_back(TokenLogprobJson(token, top_k));
  return out;
}

}  // namespace

Json BuildResponse(const ChatRequest& req, const text::ParsedOutput& output,
                   const std::vector<TokenInfo>& tokens, const FinishInfo& finish,
                   const std::string& id, int64_t created) {
  Json items = Json::array();
  if (!output.reasoning.empty()) {
    items.push_back(ReasoningItem(ItemId("rs", id, static_cast<int>(items.size())),
                                  Json::array({ReasoningPart(output.reasoning)})));
  }
  if (!output.content.empty()) {
    Json logprobs = req.logprobs ? LogprobsJson(tokens, req.top_logprobs) : Json::array();
    items.push_back(MessageItem(ItemId("msg", id, static_cast<int>(items.size())),
                                ItemStatus(finish),
                                Json::array({OutputTextPart(output.content, logprobs)})));
  }
  for (const text::ParsedToolCall& call : output.tool_calls) {
    items.push_back(FunctionCallItem(ItemId("fc", id, static_cast<int>(items.size())), call.id,
                                     call.name, call.arguments_json, ItemStatus(finish),
                                     req.tool_namespaces));
  }
  Json response = ResponseObject(req, id, created);
  FinishResponse(finish, std::move(items), &response);
  return response;
}

ResponsesStream::ResponsesStream(const ChatRequest& req, std::string id, int64_t created)
    : base_(ResponseObject(req, id, created)),
      id_(std::move(id)),
      logprobs_(req.logprobs),
      top_logprobs_(req.top_logprobs),
      tool_namespaces_(req.tool_namespaces) {}

void ResponsesStream::Emit(std::string_view type, Json fields, std::vector<std::string>* frames) {
  Json event{{"type", type}, {"sequence_number", sequence_number_++}};
  for (auto& [key, value] : fields.items()) event[key] = std::move(value);
  frames->push_back(SseEvent(type, event));
}

std::vector<std::string> ResponsesStream::Begin() {
  std::vector<std::string> frames;
  Emit("response.created", Json{{"response", base_}}, &frames);
  Emit("response.in_progress", Json{{"response", base_}}, &frames);
  return frames;
}

void ResponsesStream::OpenItem(Open kind, std::vector<std::string>* frames) {
  if (open_ == kind) return;
  CloseItem("completed", frames);
  open_ = kind;
  open_index_ = next_output_index_++;
  open_text_.clear();
  open_logprobs_ = Json::array();
  bool reasoning = kind == Open::kReasoning;
  open_item_id_ = ItemId(reasoning ? "rs" : "msg", id_, open_index_);
  Json item = reasoning ? ReasoningItem(open_item_id_, Json::array())
                        : MessageItem(open_item_id_, "in_progress", Json::array());
  Emit("response.output_item.added", Json{{"output_index", open_index_}, {"item", item}}, frames);
  Json part = reasoning ? ReasoningPart("") : OutputTextPart("", Json::array());
  Emit("response.content_part.added",
       Json{{"item_id", open_item_id_},
            {"output_index", open_index_},
            {"content_index", 0},
            {"part", part}},
       frames);
}

void ResponsesStream::CloseItem(const char* status, std::vector<std::string>* frames) {
  if (open_ == Open::kNone) return;
  bool reasoning = open_ == Open::kReasoning;
  Json where{{"item_id", open_item_id_}, {"output_index", open_index_}, {"content_index", 0}};
  Json done = where;
  done["text"] = open_text_;
  if (!reasoning) done["logprobs"] = open_logprobs_;
  Emit(reasoning ? "response.reasoning_text.done" : "response.output_text.done", done, frames);
  Json part = reasoning ? ReasoningPart(open_text_) : OutputTextPart(open_text_, open_logprobs_);
  Json part_done = where;
  part_done["part"] = part;
  Emit("response.content_part.done", part_done, frames);
  Json item = reasoning ? ReasoningItem(open_item_id_, Json::array({part}))
                        : MessageItem(open_item_id_, status, Json::array({part}));
  Emit("response.output_item.done", Json{{"output_index", open_index_}, {"item", item}}, frames);
  done_items_[open_index_] = std::move(item);
  open_ = Open::kNone;
}

void ResponsesStream::OnToolCallBegin(const text::OutputEvent& event,
                                      std::vector<std::string>* frames) {
  CloseItem("completed", frames);
  OpenCall call{next_output_index_++, "", event.tool_call_id, event.tool_name, ""};
  call.item_id = ItemId("fc", id_, call.output_index);
  Json item =
      FunctionCallItem(call.item_id, call.call_id, call.name, "", "in_progress", tool_namespaces_);
  Emit("response.output_item.added", Json{{"output_index", call.output_index}, {"item", item}},
       frames);
  calls_[event.tool_index] = std::move(call);
}

void ResponsesStream::CloseCall(int tool_index, const char* status,
                                std::vector<std::string>* frames) {
  auto it = calls_.find(tool_index);
  if (it == calls_.end()) return;
  const OpenCall& call = it->second;
  Emit("response.function_call_arguments.done",
       Json{{"item_id", call.item_id},
            {"output_index", call.output_index},
            {"name", call.name},
            {"arguments", call.arguments}},
       frames);
  Json item = FunctionCallItem(call.item_id, call.call_id, call.name, call.arguments, status,
                               tool_namespaces_);
  Emit("response.output_item.done", Json{{"output_index", call.output_index}, {"item", item}},
       frames);
  done_items_[call.output_index] = std::move(item);
  calls_.erase(it);
}

std::vector<std::string> ResponsesStream::OnEvent(const text::OutputEvent& event) {
  using Kind = text::OutputEvent::Kind;
  std::vector<std::string> frames;
  switch (event.kind) {
    case Kind::kReasoningDelta:
    case Kind::kContentDelta: {
      if (event.text.empty()) break;
      bool reasoning = event.kind == Kind::kReasoningDelta;
      OpenItem(reasoning ? Open::kReasoning : Open::kMessage, &frames);
      open_text_ += event.text;
      Json delta{{"item_id", open_item_id_},
                 {"output_index", open_index_},
                 {"content_index", 0},
                 {"delta", event.text}};
      if (!reasoning) {
        Json logprobs = logprobs_ ? LogprobsJson(pending_tokens_, top_logprobs_) : Json::array();
        for (const Json& lp : logprobs) open_logprobs_.push_back(lp);
        delta["logprobs"] = std::move(logprobs);
      }
      pending_tokens_.clear();
      Emit(reasoning ? "response.reasoning_text.delta" : "response.output_text.delta", delta,
           &frames);
      break;
    }
    case Kind::kToolCallBegin:
      pending_tokens_.clear();
      OnToolCallBegin(event, &frames);
      break;
    case Kind::kToolCallArgumentsDelta: {
      pending_tokens_.clear();
      auto it = calls_.find(event.tool_index);
      if (it == calls_.end() || event.text.empty()) break;
      it->second.arguments += event.text;
      Emit("response.function_call_arguments.delta",
           Json{{"item_id", it->second.item_id},
                {"output_index", it->second.output_index},
                {"delta", event.text}},
           &frames);
      break;
    }
    case Kind::kToolCallEnd:
      CloseCall(event.tool_index, "completed", &frames);
      break;
  }
  return frames;
}

void ResponsesStream::OnToken(const TokenInfo& token) {
  if (logprobs_) pending_tokens_.push_back(token);
}

std::vector<std::string> ResponsesStream::Finish(const FinishInfo& finish) {
  std::vector<std::string> frames;
  const char* status = ItemStatus(finish);
  CloseItem(status, &frames);
  while (!calls_.empty()) CloseCall(calls_.begin()->first, status, &frames);
  Json output = Json::array();
  for (auto& [index, item] : done_items_) output.push_back(std::move(item));
  done_items_.clear();
  Json response = base_;
  FinishResponse(finish, std::move(output), &response);
  bool complete = response["status"] == "completed";
  Emit(complete ? "response.completed" : "response.incomplete", Json{{"response", response}},
       &frames);
  return frames;
}

std::vector<std::string> ResponsesStream::Fail(const Status& status) {
  Json response = base_;
  response["status"] = "failed";
  response["error"] = Json{{"code", OpenAIErrorCode(status)}, {"message", status.message()}};
  std::vector<std::string> frames;
  Emit("response.failed", Json{{"response", response}}, &frames);
  return frames;
}

}  // namespace ds::api
