// What one streamed request cost, as the client saw it plus what the server reported, and the
// honest rates derived from it: prefill over computed tokens only (the server's own count of
// cached tokens is subtracted when it reports one), decode from token arrival times.
// Thread safety: plain values.
#pragma once

#include <cstdint>

namespace ds::bench {

// Fewer computed prompt tokens than this get no prefill rate. A request that computes a handful
// (a warm repeat computes 1) spends its TTFT on the request's overhead and the first decode step,
// not on prefill, so tokens / TTFT would be a tiny "rate" shown beside real ones.
inline constexpr int64_t kMinPrefillTokens = 64;

struct Measurement {
  // Reported by the server; -1 when it did not say.
  int64_t prompt_tokens = -1;
  int64_t cached_tokens = -1;  // of prompt_tokens, served from the server's prompt cache
  int64_t completion_tokens = -1;
  // Streamed events that carried generated text (content, reasoning or tool-call arguments).
  int64_t token_events = 0;
  // Seconds since the request was sent.
  double first_token_s = -1;  // the first generated text arrived (TTFT)
  double last_token_s = -1;   // the last generated text arrived
  double wall_s = 0;          // the stream ended

  // Prompt tokens the server had to compute; all of them when it reports no cached count.
  int64_t computed_tokens() const;
  bool cached_reported() const { return cached_tokens >= 0; }
  // Generated tokens: the server's count, else the text-carrying events.
  int64_t decode_tokens() const;
  double ttft_s() const { return first_token_s; }
  // computed_tokens / TTFT; < 0 when not measurable or under kMinPrefillTokens computed. TTFT
  // includes queueing and the network, so this is a floor on the server's own prefill rate.
  double prefill_tokens_per_s() const;
  // Tokens after the first over the time from the first to the last arrival; < 0 when fewer
  // than two tokens came.
  double decode_seconds() const;
  double decode_tokens_per_s() const;
  // (prompt + generated tokens) / wall time: the figure other tools print as "throughput". It
  // counts cached and computed prompt tokens alike, so it is reported only beside the rates
  // above and labelled as such.
  double total_tokens_per_wall_s() const;
};

}  // namespace ds::bench
