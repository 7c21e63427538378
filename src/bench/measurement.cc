#include "bench/measurement.h"

#include <algorithm>

namespace ds::bench {

int64_t Measurement::computed_tokens() const {
  if (prompt_tokens < 0) return -1;
  return cached_tokens < 0 ? prompt_tokens : std::max<int64_t>(prompt_tokens - cached_tokens, 0);
}

int64_t Measurement::decode_tokens() const {
  return completion_tokens >= 0 ? completion_tokens : token_events;
}

double Measurement::prefill_tokens_per_s() const {
  if (computed_tokens() < kMinPrefillTokens || first_token_s <= 0) return -1;
  return static_cast<double>(computed_tokens()) / first_token_s;
}

double Measurement::decode_seconds() const {
  if (first_token_s < 0 || last_token_s <= first_token_s) return -1;
  return last_token_s - first_token_s;
}

double Measurement::decode_tokens_per_s() const {
  double seconds = decode_seconds();
  if (seconds <= 0 || decode_tokens() < 2) return -1;
  return static_cast<double>(decode_tokens() - 1) / seconds;
}

double Measurement::total_tokens_per_wall_s() const {
  if (prompt_tokens < 0 || wall_s <= 0) return -1;
  return static_cast<double>(prompt_tokens + std::max<int64_t>(decode_tokens(), 0)) / wall_s;
}

}  // namespace ds::bench
