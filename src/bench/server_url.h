// A server address as users write it: http[s]://host[:port][/prefix]. A trailing /v1 is
// dropped, since OPENAI_BASE_URL-style addresses carry it and the benchmark adds each endpoint's
// full path.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace ds::bench {

struct ServerUrl {
  bool https = false;
  std::string host;  // without brackets for IPv6
  int port = 80;
  std::string prefix;  // "" or "/path" without a trailing slash, put before every endpoint
  std::string text;    // as given, for reports

  // "http://host:port", brackets around an IPv6 host.
  std::string origin() const;
};

StatusOr<ServerUrl> ParseServerUrl(std::string_view url);

}  // namespace ds::bench
