#include "bench/progress.h"

#include <unistd.h>

#include <cstdio>

namespace ds::bench {

Progress::Progress(std::string mode, int64_t total_steps)
    : mode_(std::move(mode)), total_(total_steps), terminal_(isatty(STDERR_FILENO) != 0) {}

std::string Progress::Prefix() const {
  return "[" + std::to_string(done_ + 1) + "/" + std::to_string(total_) + "] " + mode_ + ": ";
}

void Progress::Begin(const std::string& what) {
  std::lock_guard lock(mu_);
  if (!terminal_) return;
  std::fprintf(stderr, "\r\033[K%s%s ...", Prefix().c_str(), what.c_str());
  std::fflush(stderr);
}

void Progress::End(const std::string& what, const std::string& result) {
  std::lock_guard lock(mu_);
  std::fprintf(stderr, "%s%s%s: %s\n", terminal_ ? "\r\033[K" : "", Prefix().c_str(),
               what.c_str(), result.c_str());
  std::fflush(stderr);
  ++done_;
}

void Progress::Note(const std::string& what, const std::string& result) {
  std::lock_guard lock(mu_);
  std::fprintf(stderr, "%s%s: %s: %s\n", terminal_ ? "\r\033[K" : "", mode_.c_str(), what.c_str(),
               result.c_str());
  std::fflush(stderr);
}

std::string Summarize(const Measurement& m) {
  auto rate = [](double v, const char* unit) {
    if (v < 0) return std::string("n/a");
    char buf[48];
    std::snprintf(buf, sizeof(buf), "%.1f %s", v, unit);
    return std::string(buf);
  };
  std::string cached = m.cached_reported() ? std::to_string(m.cached_tokens) : "? (not reported)";
  char ttft[32];
  std::snprintf(ttft, sizeof(ttft), "%.3f s", m.ttft_s());
  std::string computed = std::to_string(m.computed_tokens()) + " computed";
  std::string prefill = m.computed_tokens() < kMinPrefillTokens
                            ? "prefill not rated (" + computed + ", under " +
                                  std::to_string(kMinPrefillTokens) + ")"
                            : "prefill " + rate(m.prefill_tokens_per_s(), "tok/s") + " over " +
                                  computed;
  return std::to_string(m.prompt_tokens) + " prompt tokens, " + cached + " cached, TTFT " + ttft +
         ", " + prefill + ", decode " + rate(m.decode_tokens_per_s(), "tok/s") + " over " +
         std::to_string(m.decode_tokens()) + " tokens";
}

std::string Outcome(const RequestResult& result) {
  if (result.ok()) return Summarize(result.measurement);
  const Measurement& m = result.measurement;
  char text[96];
  if (m.ttft_s() >= 0) {
    std::snprintf(text, sizeof(text), "FAILED after %.2f s (TTFT %.3f s, %lld tokens streamed): ",
                  m.wall_s, m.ttft_s(), static_cast<long long>(m.decode_tokens()));
  } else {
    std::snprintf(text, sizeof(text), "FAILED after %.2f s (no token streamed): ", m.wall_s);
  }
  return text + result.status.message();
}

}  // namespace ds::bench
