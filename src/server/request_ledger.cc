#include "server/request_ledger.h"

#include <chrono>
#include <cstdio>

#include "base/log.h"

namespace ds::server {
namespace {

// What the log line and the dashboard keep of a reason or a path. The JSON parser's message
// quotes what it last read, which can be a whole prompt, and a path may take most of a 64 KiB
// head; the client's error body keeps all of it.
constexpr size_t kMaxTextBytes = 240;

// The first kMaxTextBytes of `text`, cut between UTF-8 characters, marked when cut.
std::string Shortened(std::string text) {
  if (text.size() <= kMaxTextBytes) return text;
  size_t end = kMaxTextBytes;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  text.resize(end);
  return text + "...";
}

std::string CacheFigures(const RequestRecord& r) {
  const int64_t cached = r.cached_memory + r.cached_disk;
  const std::string lookup =
      cached > 0 ? "HIT(" + r.tier + ")" : "MISS(" + r.cache_limit + ")";
  char buf[256];
  std::snprintf(buf, sizeof(buf),
                " cached=%lld prefill=%lld restore=%.2fs ttft=%.2fs decode=%lld@%.1ftok/s",
                static_cast<long long>(cached), static_cast<long long>(r.computed),
                r.restore_ms / 1e3, r.ttft_ms / 1e3, static_cast<long long>(r.decode_tokens),
                r.decode_tokens_per_s);
  return "uid=" + r.id + " " + lookup + buf;
}

}  // namespace

std::string RequestLogLine(const RequestRecord& r) {
  // A refusal before the request line arrived has neither method nor path.
  std::string line = (r.method.empty() ? "-" : LogSafe(r.method)) + " " +
                     (r.path.empty() ? "-" : LogSafe(r.path)) + " " + std::to_string(r.status) +
                     " " + OutcomeName(r.outcome) + " from " + r.peer;
  if (r.ran) line += " " + CacheFigures(r);
  if (!r.reason.empty()) line += ": " + LogSafe(r.reason);
  return line;
}

RequestLedger::RequestLedger(ServerMetrics* metrics, RequestHistory* history)
    : metrics_(metrics), history_(history) {}

void RequestLedger::Record(const RequestHead& head, int status, std::string reason) {
  RequestRecord record;
  record.reason = std::move(reason);
  Record(head, status, std::move(record));
}

void RequestLedger::Record(const RequestHead& head, int status, RequestRecord record) {
  record.method = head.method;
  record.path = Shortened(head.path);
  record.peer = head.peer;
  record.status = status;
  record.reason = Shortened(std::move(record.reason));
  if (!record.ran) record.outcome = OutcomeOf(status);
  record.unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  DS_LOG_INFO("{}", RequestLogLine(record));
  metrics_->RecordHttpRequest(record.status, OutcomeName(record.outcome));
  history_->Add(std::move(record));
}

}  // namespace ds::server
