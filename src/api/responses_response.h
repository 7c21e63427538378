// OpenAI Responses API results: the response object and its SSE event sequence (each frame
// "event: <type>\ndata: {type, sequence_number, ...}\n\n", sequence numbers from 0).
//
// Output items, in the order they appear: reasoning {id "rs_…", summary: [], content:
// [{type: "reasoning_text", text}]}, message {id "msg_…", role: "assistant", content:
// [{type: "output_text", text, annotations: [], logprobs}]}, function_call {id "fc_…", call_id,
// name, arguments, status} (plus "namespace" for a function declared inside a namespace tool).
// Item ids are "<prefix>_<response id without resp_>_<output_index>".
//
// Stream: response.created, response.in_progress; per item response.output_item.added, for
// reasoning and message a response.content_part.added, then response.reasoning_text.delta /
// response.output_text.delta / response.function_call_arguments.delta, and on close the
// matching *.done events, response.content_part.done and response.output_item.done; last
// response.completed (or response.incomplete with incomplete_details.reason
// "max_output_tokens" when the token limit ended generation) carrying the full response with
// usage {input_tokens, input_tokens_details: {cached_tokens}, output_tokens,
// output_tokens_details: {reasoning_tokens}, total_tokens} and the deltaserve timings. Reasoning
// and message items stay open across deltas of their kind and close when another item starts;
// a function call closes at its end event. Logprobs as in openai_response.h.
//
// Thread safety: a stream object belongs to one request.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "api/types.h"
#include "base/status.h"
#include "text/output_events.h"

namespace ds::api {

Json BuildResponse(const ChatRequest& req, const text::ParsedOutput& output,
                   const std::vector<TokenInfo>& tokens, const FinishInfo& finish,
                   const std::string& id, int64_t created);

class ResponsesStream {
 public:
  ResponsesStream(const ChatRequest& req, std::string id, int64_t created);

  std::vector<std::string> Begin();
  std::vector<std::string> OnEvent(const text::OutputEvent& event);
  void OnToken(const TokenInfo& token);
  std::vector<std::string> Finish(const FinishInfo& finish);
  // After Begin: response.failed with response.error {code, message}.
  std::vector<std::string> Fail(const Status& status);

 private:
  enum class Open { kNone, kReasoning, kMessage };
  struct OpenCall {
    int output_index;
    std::string item_id, call_id, name, arguments;
  };

  void Emit(std::string_view type, Json fields, std::vector<std::string>* frames);
  void OpenItem(Open kind, std::vector<std::string>* frames);
  void CloseItem(const char* status, std::vector<std::string>* frames);
  void CloseCall(int tool_index, const char* status, std::vector<std::string>* frames);
  void OnToolCallBegin(const text::OutputEvent& event, std::vector<std::string>* frames);

  Json base_;  // the response object as response.created shows it
  std::string id_;
  bool logprobs_;
  int64_t top_logprobs_;
  std::map<std::string, std::string> tool_namespaces_;
  int sequence_number_ = 0;
  int next_output_index_ = 0;
  std::map<int, Json> done_items_;  // by output_index

  Open open_ = Open::kNone;
  int open_index_ = -1;
  std::string open_item_id_;
  std::string open_text_;
  Json open_logprobs_ = Json::array();

  std::map<int, OpenCall> calls_;  // by tool_index, while open
  std::vector<TokenInfo> pending_tokens_;
};

}  // namespace ds::api
