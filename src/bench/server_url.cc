#include "bench/server_url.h"

#include <charconv>

namespace ds::bench {

StatusOr<ServerUrl> ParseServerUrl(std::string_view url) {
  ServerUrl out;
  out.text = std::string(url);
  out.https = url.starts_with("https://");
  if (!out.https && !url.starts_with("http://")) {
    return InvalidArgumentError("server URL " + out.text + " must start with http:// or https://");
  }
  if (out.https) out.port = 443;
  std::string_view rest = url.substr(out.https ? 8 : 7);
  size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? "" : rest.substr(slash);
  while (path.ends_with('/')) path.remove_suffix(1);
  if (path.ends_with("/v1")) path.remove_suffix(3);
  out.prefix = std::string(path);
  size_t colon = authority.rfind(':');
  if (colon != std::string_view::npos && authority.find(']', colon) == std::string_view::npos) {
    std::string_view port = authority.substr(colon + 1);
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), out.port);
    if (ec != std::errc() || end != port.data() + port.size() || out.port <= 0 ||
        out.port > 65535) {
      return InvalidArgumentError("server URL " + out.text + ": bad port \"" +
                                  std::string(port) + "\"");
    }
    authority = authority.substr(0, colon);
  }
  if (authority.size() >= 2 && authority.front() == '[' && authority.back() == ']') {
    authority = authority.substr(1, authority.size() - 2);
  }
  if (authority.empty()) return InvalidArgumentError("server URL " + out.text + " has no host");
  out.host = std::string(authority);
  return out;
}

std::string ServerUrl::origin() const {
  bool ipv6 = host.find(':') != std::string::npos;
  return std::string(https ? "https://" : "http://") + (ipv6 ? "[" + host + "]" : host) + ":" +
         std::to_string(port);
}

}  // namespace ds::bench
