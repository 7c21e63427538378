#include "bench/stream_observer.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "bench/quote.h"

namespace ds::bench {
namespace {

using Json = nlohmann::json;

int64_t IntAt(const Json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_number_integer() ? it->get<int64_t>() : -1;
}

bool NonEmptyText(const Json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() && !it->get_ref<const std::string&>().empty();
}

// True when the event carries generated text of any kind.
bool CarriesText(const Json& event) {
  if (event.contains("choices") && event["choices"].is_array() && !event["choices"].empty()) {
    const Json& choice = event["choices"][0];
    if (!choice.is_object()) return false;
    if (NonEmptyText(choice, "text")) return true;  // completions
    auto delta = choice.find("delta");
    if (delta == choice.end() || !delta->is_object()) return false;
    if (NonEmptyText(*delta, "content") || NonEmptyText(*delta, "reasoning_content") ||
        NonEmptyText(*delta, "reasoning")) {
      return true;
    }
    auto calls = delta->find("tool_calls");
    return calls != delta->end() && calls->is_array() && !calls->empty();
  }
  auto delta = event.find("delta");  // Anthropic content_block_delta
  if (delta == event.end() || !delta->is_object()) return false;
  return NonEmptyText(*delta, "text") || NonEmptyText(*delta, "thinking") ||
         NonEmptyText(*delta, "partial_json");
}

void ReadOpenAIUsage(const Json& usage, Measurement* m) {
  if (int64_t v = IntAt(usage, "prompt_tokens"); v >= 0) m->prompt_tokens = v;
  if (int64_t v = IntAt(usage, "completion_tokens"); v >= 0) m->completion_tokens = v;
  if (auto details = usage.find("prompt_tokens_details");
      details != usage.end() && details->is_object()) {
    if (int64_t v = IntAt(*details, "cached_tokens"); v >= 0) m->cached_tokens = v;
  }
}

// Anthropic: input_tokens excludes what was read from or written to the cache.
void ReadAnthropicUsage(const Json& usage, Measurement* m) {
  int64_t input = IntAt(usage, "input_tokens");
  if (input >= 0) {
    int64_t read = std::max<int64_t>(IntAt(usage, "cache_read_input_tokens"), 0);
    int64_t created = std::max<int64_t>(IntAt(usage, "cache_creation_input_tokens"), 0);
    m->prompt_tokens = input + read + created;
    if (usage.contains("cache_read_input_tokens")) m->cached_tokens = read;
  }
  if (int64_t v = IntAt(usage, "output_tokens"); v > 0) m->completion_tokens = v;
}

// deltaserve: cached_tokens + prompt_tokens_computed; llama-server: cache_n + prompt_n.
void ReadTimings(const Json& timings, Measurement* m) {
  int64_t cached = IntAt(timings, "cached_tokens");
  int64_t computed = IntAt(timings, "prompt_tokens_computed");
  if (cached < 0 && computed < 0) {
    cached = IntAt(timings, "cache_n");
    computed = IntAt(timings, "prompt_n");
  }
  if (cached >= 0) m->cached_tokens = cached;
  if (cached >= 0 && computed >= 0 && m->prompt_tokens < 0) m->prompt_tokens = cached + computed;
  if (int64_t v = IntAt(timings, "predicted_n"); v >= 0 && m->completion_tokens < 0) {
    m->completion_tokens = v;
  }
}

}  // namespace

void StreamObserver::OnEvent(const SseEvent& event, double t_s) {
  if (!status_.ok() || event.data == "[DONE]") return;
  Json payload = Json::parse(event.data, nullptr, /*allow_exceptions=*/false);
  if (payload.is_discarded() || !payload.is_object()) {
    status_ = DataLossError("the server streamed a payload that is not a JSON object: " +
                            Quote(event.data, 200));
    return;
  }
  if (event.event == "error" || payload.contains("error")) {
    status_ = UnavailableError("the server streamed an error: " + Quote(event.data, 500));
    return;
  }
  if (CarriesText(payload)) {
    if (m_.first_token_s < 0) m_.first_token_s = t_s;
    m_.last_token_s = t_s;
    ++m_.token_events;
  }
  if (auto usage = payload.find("usage"); usage != payload.end() && usage->is_object()) {
    if (usage->contains("input_tokens") || usage->contains("output_tokens")) {
      ReadAnthropicUsage(*usage, &m_);
    } else {
      ReadOpenAIUsage(*usage, &m_);
    }
  }
  if (auto message = payload.find("message"); message != payload.end() && message->is_object()) {
    if (auto usage = message->find("usage"); usage != message->end() && usage->is_object()) {
      ReadAnthropicUsage(*usage, &m_);
    }
  }
  if (auto timings = payload.find("timings"); timings != payload.end() && timings->is_object()) {
    ReadTimings(*timings, &m_);
  }
}

Measurement StreamObserver::Finish(double wall_s) {
  m_.wall_s = wall_s;
  return m_;
}

}  // namespace ds::bench
