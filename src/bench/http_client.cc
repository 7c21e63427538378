#include "bench/http_client.h"

#include <httplib.h>

#include <chrono>

#include "bench/quote.h"

namespace ds::bench {
namespace {

constexpr size_t kQuotedBodyBytes = 500;

std::unique_ptr<httplib::Client> Connect(const ServerUrl& url, double timeout_s) {
  auto client = std::make_unique<httplib::Client>(url.origin());
  auto timeout = std::chrono::duration<double>(timeout_s);
  client->set_connection_timeout(std::chrono::duration_cast<std::chrono::microseconds>(
      std::min(timeout, std::chrono::duration<double>(10))));
  client->set_read_timeout(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
  client->set_write_timeout(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
  return client;
}

httplib::Headers ToHeaders(const HeaderMap& headers) {
  httplib::Headers out;
  for (const auto& [name, value] : headers) out.emplace(name, value);
  return out;
}

// `responded`: the status line had arrived, so the connection broke mid-response; httplib's own
// word for that ("Read") does not say so.
Status TransportError(const ServerUrl& url, const std::string& path, httplib::Error error,
                      bool responded) {
  std::string what = httplib::to_string(error);
  if (responded) what = "the connection broke during the response (" + what + ")";
  return UnavailableError("POST " + url.text + path + " failed: " + what);
}

Status HttpStatusError(const std::string& method, const ServerUrl& url, const std::string& path,
                       int status, const std::string& body) {
  return UnavailableError(method + " " + url.text + path + ": HTTP " + std::to_string(status) +
                          ": " + Quote(body, kQuotedBodyBytes));
}

}  // namespace

StreamedResponse PostStreaming(
    const ServerUrl& url, const std::string& path, const HeaderMap& headers,
    const std::string& body, double timeout_s,
    const std::function<void(const SseEvent&, double t_s)>& on_event) {
  std::unique_ptr<httplib::Client> client = Connect(url, timeout_s);
  httplib::Request request;
  request.method = "POST";
  request.path = url.prefix + path;
  request.headers = ToHeaders(headers);
  request.headers.emplace("Accept", "text/event-stream");
  request.set_header("Content-Type", "application/json");
  request.body = body;
  int status = 0;
  std::string error_body;
  SseParser parser;
  auto start = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  request.response_handler = [&](const httplib::Response& response) {
    status = response.status;
    return true;
  };
  request.content_receiver = [&](const char* data, size_t size, uint64_t, uint64_t) {
    if (status < 200 || status >= 300) {
      if (error_body.size() < kQuotedBodyBytes) error_body.append(data, size);
      return true;
    }
    double t = seconds();
    for (const SseEvent& event : parser.Feed(std::string_view(data, size))) on_event(event, t);
    return true;
  };
  httplib::Response response;
  httplib::Error error = httplib::Error::Success;
  bool sent = client->send(request, response, error);
  double wall = seconds();
  if (!sent) return {wall, TransportError(url, path, error, status != 0)};
  if (status < 200 || status >= 300) {
    return {wall, HttpStatusError("POST", url, path, status, error_body)};
  }
  return {wall, OkStatus()};
}

StatusOr<std::string> Get(const ServerUrl& url, const std::string& path, const HeaderMap& headers,
                          double timeout_s) {
  std::unique_ptr<httplib::Client> client = Connect(url, timeout_s);
  httplib::Result result = client->Get(url.prefix + path, ToHeaders(headers));
  if (!result) {
    return UnavailableError("GET " + url.text + path + " failed: " +
                            httplib::to_string(result.error()));
  }
  if (result->status < 200 || result->status >= 300) {
    return HttpStatusError("GET", url, path, result->status, result->body);
  }
  return result->body;
}

}  // namespace ds::bench
