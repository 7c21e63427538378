// One API's way of answering a generation: SSE frames while it streams, or one JSON body at the
// end. Adapts the api library's per-API stream classes and builders to one interface, so the
// service's request flow is the same for every API.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "api/types.h"
#include "server/generation_runner.h"

namespace ds::server {

class StreamFormat {
 public:
  virtual ~StreamFormat() = default;
  virtual std::vector<std::string> Begin(int64_t prompt_tokens, int64_t cached_tokens) = 0;
  virtual std::vector<std::string> OnProgress(const std::string& text,
                                              const std::vector<text::OutputEvent>& events,
                                              const api::TokenInfo* token) = 0;
  virtual std::vector<std::string> Finish(const api::FinishInfo& finish) = 0;
  virtual std::vector<std::string> Fail(const Status& status) = 0;
};

// REQUIRES: request.api is a generating API (not count_tokens). The request outlives the format.
std::unique_ptr<StreamFormat> MakeStreamFormat(const api::ChatRequest& request,
                                               const std::string& id, int64_t created);

api::Json BuildFinalResponse(const api::ChatRequest& request, const GenerationOutput& output,
                             const std::string& id, int64_t created);

}  // namespace ds::server
