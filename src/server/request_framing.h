// Where one HTTP/1.1 request ends in the bytes a connection has sent so far, judged from its
// head alone, with the limits that refuse a request before a handler thread is spent on it.
// Pure functions: the connection reception (reception.h) calls them as bytes arrive.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ds::server {

struct FramingLimits {
  size_t max_head_bytes = size_t{64} << 10;  // request line and headers
  uint64_t max_body_bytes = uint64_t{64} << 20;
};

struct RequestFrame {
  enum class State { kIncomplete, kComplete, kRefused };
  State state = State::kIncomplete;
  size_t head_bytes = 0;  // known once the head is complete
  size_t size = 0;        // kComplete: head and body
  int status = 0;         // kRefused: the HTTP status to answer, with `reason`
  std::string reason;
  std::string method;  // known once the head is complete
  std::string path;    // the target without its query
  std::string host;    // the Host header
  std::string origin;  // the Origin header, when sent
};

// Frames the request at the front of `bytes`. Refuses what no handler should read: a head over
// its limit (431), a malformed request line or framing headers (400: a Content-Length that is
// not a plain decimal or disagrees with another, one beside Transfer-Encoding, an encoding other
// than chunked), a body over its limit (413), and a POST, PUT or PATCH with neither
// Content-Length nor chunked encoding (411), whose body would otherwise end only when the client
// closes.
RequestFrame FrameRequest(std::string_view bytes, const FramingLimits& limits);

}  // namespace ds::server
