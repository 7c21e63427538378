#include "server/request_framing.h"

#include <algorithm>
#include <cctype>

namespace ds::server {
namespace {

bool IEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

RequestFrame Refuse(RequestFrame frame, int status, std::string reason) {
  frame.state = RequestFrame::State::kRefused;
  frame.status = status;
  frame.reason = std::move(reason);
  return frame;
}

// A plain decimal that fits in 63 bits, else nothing.
bool ParseDecimal(std::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > 18) return false;
  uint64_t value = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  *out = value;
  return true;
}

enum class ChunkWalk { kIncomplete, kComplete, kMalformed, kTooLarge };

// Walks chunked body bytes; on kComplete, *end is where the body (with its trailers) ends.
ChunkWalk WalkChunks(std::string_view body, uint64_t max_bytes, size_t* end) {
  size_t pos = 0;
  uint64_t total = 0;
  while (true) {
    const size_t line_end = body.find("\r\n", pos);
    if (line_end == std::string_view::npos) {
      return body.size() - pos > 1024 ? ChunkWalk::kMalformed : ChunkWalk::kIncomplete;
    }
    std::string_view size_text = body.substr(pos, line_end - pos);
    size_text = Trim(size_text.substr(0, size_text.find(';')));
    if (size_text.empty() || size_text.size() > 15) return ChunkWalk::kMalformed;
    uint64_t size = 0;
    for (char c : size_text) {
      if (!std::isxdigit(static_cast<unsigned char>(c))) return ChunkWalk::kMalformed;
      size = size * 16 + static_cast<uint64_t>(std::isdigit(static_cast<unsigned char>(c))
                                                   ? c - '0'
                                                   : std::tolower(c) - 'a' + 10);
    }
    total += size;
    if (total > max_bytes) return ChunkWalk::kTooLarge;
    pos = line_end + 2;
    if (size == 0) {
      // Trailer lines, then an empty line.
      while (true) {
        const size_t trailer_end = body.find("\r\n", pos);
        if (trailer_end == std::string_view::npos) {
          return body.size() - pos > 8192 ? ChunkWalk::kMalformed : ChunkWalk::kIncomplete;
        }
        if (trailer_end == pos) {
          *end = pos + 2;
          return ChunkWalk::kComplete;
        }
        pos = trailer_end + 2;
      }
    }
    if (body.size() < pos + size + 2) return ChunkWalk::kIncomplete;
    if (body.compare(pos + size, 2, "\r\n") != 0) return ChunkWalk::kMalformed;
    pos += size + 2;
  }
}

}  // namespace

RequestFrame FrameRequest(std::string_view bytes, const FramingLimits& limits) {
  RequestFrame frame;
  const size_t head_end = bytes.find("\r\n\r\n");
  if (head_end == std::string_view::npos || head_end + 4 > limits.max_head_bytes) {
    if (bytes.size() >= limits.max_head_bytes) {
      return Refuse(std::move(frame), 431,
                    "the request line and headers exceed " +
                        std::to_string(limits.max_head_bytes) + " bytes");
    }
    return frame;
  }
  frame.head_bytes = head_end + 4;
  std::string_view head = bytes.substr(0, head_end + 2);
  const size_t line_end = head.find("\r\n");
  std::string_view line = head.substr(0, line_end);
  const size_t sp1 = line.find(' ');
  const size_t sp2 = line.rfind(' ');
  if (sp1 == std::string_view::npos || sp2 == sp1 || line.substr(sp2 + 1).rfind("HTTP/1.", 0) != 0) {
    return Refuse(std::move(frame), 400, "malformed request line");
  }
  frame.method = std::string(line.substr(0, sp1));
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  frame.path = std::string(target.substr(0, target.find('?')));

  bool has_length = false;
  bool chunked = false;
  uint64_t length = 0;
  size_t pos = line_end + 2;
  while (pos < head.size()) {
    const size_t end = head.find("\r\n", pos);
    std::string_view header = head.substr(pos, end - pos);
    pos = end + 2;
    const size_t colon = header.find(':');
    if (colon == std::string_view::npos) return Refuse(std::move(frame), 400, "malformed header");
    std::string_view name = header.substr(0, colon);
    std::string_view value = Trim(header.substr(colon + 1));
    if (IEquals(name, "Content-Length")) {
      uint64_t parsed = 0;
      if (!ParseDecimal(value, &parsed) || (has_length && parsed != length)) {
        return Refuse(std::move(frame), 400,
                      "Content-Length must be one non-negative decimal integer");
      }
      has_length = true;
      length = parsed;
    } else if (IEquals(name, "Transfer-Encoding")) {
      if (!IEquals(value, "chunked")) {
        return Refuse(std::move(frame), 400, "the only transfer encoding accepted is chunked");
      }
      chunked = true;
    } else if (IEquals(name, "Host")) {
      frame.host = std::string(value);
    } else if (IEquals(name, "Origin")) {
      frame.origin = std::string(value);
    }
  }
  if (has_length && chunked) {
    return Refuse(std::move(frame), 400, "Content-Length and Transfer-Encoding together");
  }
  if (has_length && length > limits.max_body_bytes) {
    return Refuse(std::move(frame), 413,
                  "the request body is larger than the limit of " +
                      std::to_string(limits.max_body_bytes) + " bytes (--max-body-bytes)");
  }
  const bool needs_body = frame.method == "POST" || frame.method == "PUT" ||
                          frame.method == "PATCH";
  if (needs_body && !has_length && !chunked) {
    return Refuse(std::move(frame), 411, "a " + frame.method + " request needs a Content-Length");
  }
  if (chunked) {
    size_t body_end = 0;
    switch (WalkChunks(bytes.substr(frame.head_bytes), limits.max_body_bytes, &body_end)) {
      case ChunkWalk::kIncomplete:
        return frame;
      case ChunkWalk::kMalformed:
        return Refuse(std::move(frame), 400, "malformed chunked body");
      case ChunkWalk::kTooLarge:
        return Refuse(std::move(frame), 413,
                      "the request body is larger than the limit of " +
                          std::to_string(limits.max_body_bytes) + " bytes (--max-body-bytes)");
      case ChunkWalk::kComplete:
        frame.size = frame.head_bytes + body_end;
        frame.state = RequestFrame::State::kComplete;
        return frame;
    }
  }
  if (bytes.size() < frame.head_bytes + length) return frame;
  frame.size = frame.head_bytes + length;
  frame.state = RequestFrame::State::kComplete;
  return frame;
}

}  // namespace ds::server
