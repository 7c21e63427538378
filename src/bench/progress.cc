#include "bench/progress.h"

#include <unistd.h>

#include <cstdio>

#include "base/check.h"

namespace ds::bench {

ProgressOptions StderrProgress() {
  ProgressOptions options;
  options.terminal = isatty(STDERR_FILENO) != 0;
  options.write = [](const std::string& text) {
    std::fputs(text.c_str(), stderr);
    std::fflush(stderr);
  };
  return options;
}

namespace {

ProgressOptions Checked(ProgressOptions options) {
  DS_CHECK(options.redraw_s > 0 && options.log_every_s > 0 && options.write);
  return options;
}

}  // namespace

Progress::Progress(std::string mode, int64_t total_steps, ProgressOptions options)
    : mode_(std::move(mode)),
      total_(total_steps),
      options_(Checked(std::move(options))),
      clock_([this] { Tick(); }) {}

Progress::~Progress() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    if (options_.terminal && !running_.empty()) options_.write("\r\033[K");
  }
  changed_.notify_all();
  clock_.join();
}

std::string Progress::Prefix() const {
  return "[" + std::to_string(done_ + 1) + "/" + std::to_string(total_) + "] " + mode_ + ": ";
}

void Progress::Begin(const std::string& what) {
  std::lock_guard lock(mu_);
  running_ = what;
  running_since_ = Clock::now();
  if (options_.terminal) options_.write("\r\033[K" + Prefix() + what + " ... 0 s");
  changed_.notify_all();
}

void Progress::Stop(const std::string& what) {
  if (running_ != what) return;
  running_.clear();
  changed_.notify_all();
}

void Progress::End(const std::string& what, const std::string& result) {
  std::lock_guard lock(mu_);
  Stop(what);
  options_.write((options_.terminal ? "\r\033[K" : "") + Prefix() + what + ": " + result + "\n");
  ++done_;
}

void Progress::Note(const std::string& what, const std::string& result) {
  std::lock_guard lock(mu_);
  Stop(what);
  options_.write((options_.terminal ? "\r\033[K" : "") + mode_ + ": " + what + ": " + result +
                 "\n");
}

void Progress::Tick() {
  const auto interval = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(options_.terminal ? options_.redraw_s : options_.log_every_s));
  std::unique_lock lock(mu_);
  while (!stopping_) {
    if (running_.empty()) {
      changed_.wait(lock);
      continue;
    }
    // The next whole interval of the running step, so each line's time is a multiple of it.
    const std::string step = running_;
    const auto since = running_since_;
    const auto next = since + interval * ((Clock::now() - since) / interval + 1);
    changed_.wait_until(lock, next, [&] {
      return stopping_ || running_ != step || running_since_ != since;
    });
    if (stopping_ || running_ != step || running_since_ != since) continue;
    std::string elapsed = ElapsedText(std::chrono::duration<double>(Clock::now() - since).count());
    options_.write(options_.terminal ? "\r\033[K" + Prefix() + step + " ... " + elapsed
                                     : Prefix() + step + ": still running after " + elapsed + "\n");
  }
}

std::string ElapsedText(double seconds) {
  const int64_t whole = static_cast<int64_t>(seconds);
  if (whole < 60) return std::to_string(whole) + " s";
  char text[32];
  std::snprintf(text, sizeof(text), "%lld min %02lld s", static_cast<long long>(whole / 60),
                static_cast<long long>(whole % 60));
  return text;
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
         std::to_string(m.decode_tokens()) + " tokens, " + rate(m.wall_s, "s") + " in all";
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
