// Pieces shared by the request parsers of all APIs: sampling fields, stop strings, content
// flattening, tool-call argument conversion and the final normalisation of the message list.
// Thread safety: stateless functions.
#pragma once

#include <string>
#include <string_view>

#include "api/types.h"
#include "base/status.h"

namespace ds::api {

// The body must be a JSON object.
Status CheckBodyIsObject(const Json& body);

// temperature, top_p, top_k, min_p, seed, presence_penalty, frequency_penalty,
// repetition_penalty (also repeat_penalty) and, for the OpenAI APIs, logit_bias
// ({"<token id>": bias in [-100, 100]}). Unset fields keep the values already in req->sampling.
Status ParseSamplingFields(const Json& body, bool allow_logit_bias, ChatRequest* req);

// `key` as one string or an array of strings, appended to req->stop.
Status ParseStopField(const Json& body, std::string_view key, ChatRequest* req);

// tool_choice: "auto" | "none" | "required" | {"type": "function", "function": {"name"}}, or the
// Responses API's flat {"type": "function", "name"}.
Status ParseOpenAIToolChoice(const Json& body, ChatRequest* req);

// Text of a message content: a string, null (empty), or an array of parts whose "type" is one
// of the text part types ("text", "input_text", "output_text") concatenated without separator.
// Image parts are rejected with a clear message (text-only models); other types name the type.
StatusOr<std::string> ContentText(const Json& content, std::string_view path);

// An assistant tool call's arguments: the parsed object when `arguments_text` is a JSON object,
// otherwise the text itself (the template then renders it verbatim).
Json ArgumentsValue(const std::string& arguments_text);

// {"type": "function", "function": {...}} from a tool's name, description and JSON schema.
Json FunctionTool(const std::string& name, const Json* description, const Json* parameters);

// Merges the leading run of system messages and names tool messages after the calls they
// answer. Called by every chat parser last.
void NormalizeMessages(ChatRequest* req);

}  // namespace ds::api
