#include "server/http_server.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "api/models.h"
#include "base/json_depth.h"
#include "base/log.h"
#include "server/connection_stream.h"
#include "server/dashboard_page.h"

namespace ds::server {

// The routes, with the listener's accepted sockets handed to the reception instead of each
// being served on a thread of its own.
class HttpServer::Routes : public httplib::Server {
 public:
  std::function<void(int)> on_accept;

  bool ServeRequest(httplib::Stream& stream, bool close_connection, bool& connection_closed) {
    return process_request(stream, close_connection, connection_closed, nullptr);
  }

 private:
  bool process_and_close_socket(socket_t sock) override {
    on_accept(sock);
    return true;
  }
};

namespace {

// Requests a kept-alive connection may carry before the server closes it.
constexpr int kMaxRequestsPerConnection = 1000;
// The cheap routes' own threads and the requests that may wait for them.
constexpr int kLightThreads = 2;
constexpr size_t kLightWaiting = 256;

// Runs each accepted socket's task on the listener's thread: the task only hands it over.
class InlineTasks : public httplib::TaskQueue {
 public:
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override {}
};

bool IsLightRoute(const RequestFrame& frame) {
  if (frame.method != "GET" && frame.method != "HEAD") return false;
  for (const char* path : {"/health", "/metrics", "/v1/models", "/models", "/", "/v1/stats"}) {
    if (frame.path == path) return true;
  }
  return false;
}

std::string_view ReasonPhrase(int status) {
  switch (status) {
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 408: return "Request Timeout";
    case 411: return "Length Required";
    case 413: return "Payload Too Large";
    case 431: return "Request Header Fields Too Large";
    case 503: return "Service Unavailable";
    default: return "Error";
  }
}

// A refusal in the error shape of the API the path belongs to.
std::string RefusalResponse(const std::string& path, int status, const std::string& message) {
  const api::ApiKind kind = path.rfind("/v1/messages", 0) == 0 ? api::ApiKind::kAnthropicMessages
                                                                 : api::ApiKind::kChatCompletions;
  const Status reason = status == 503 ? UnavailableError(message) : InvalidArgumentError(message);
  const std::string body = api::ErrorResponse(kind, reason).body.dump(
      -1, ' ', false, api::Json::error_handler_t::replace);
  std::string response = "HTTP/1.1 " + std::to_string(status) + " " +
                         std::string(ReasonPhrase(status)) +
                         "\r\nContent-Type: application/json\r\nContent-Length: " +
                         std::to_string(body.size()) + "\r\nConnection: close\r\n";
  if (status == 503) response += "Retry-After: 1\r\n";
  return response + "\r\n" + body;
}

// The host of a Host header or of an origin's authority, lower-cased, without its port.
std::string HostName(std::string_view authority) {
  std::string_view host = authority;
  if (!host.empty() && host.front() == '[') {
    host = host.substr(0, host.find(']') + 1);
  } else {
    host = host.substr(0, host.find(':'));
  }
  std::string lower(host);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

bool IsLoopbackName(const std::string& host) {
  if (host == "localhost" || host == "[::1]") return true;
  return host.rfind("127.", 0) == 0 &&
         host.find_first_not_of("0123456789.") == std::string::npos;
}

ReceptionOptions ReceptionFor(const ServerOptions& options) {
  ReceptionOptions reception = options.reception;
  reception.framing.max_body_bytes = static_cast<uint64_t>(options.max_body_bytes);
  return reception;
}

void SendJson(httplib::Response& res, int status, const api::Json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, api::Json::error_handler_t::replace),
                  "application/json");
}

void SendError(httplib::Response& res, api::ApiKind kind, const Status& status) {
  api::HttpError error = api::ErrorResponse(kind, status);
  if (error.status == 503 || error.status == 429) res.set_header("Retry-After", "1");
  SendJson(res, error.status, error.body);
}

// The parser's own message says where and why (including ill-formed UTF-8); the library reports
// it by exception, which stops here.
StatusOr<api::Json> ParseBody(const std::string& text) {
  if (!JsonDepthWithin(text)) {
    return InvalidArgumentError("the request body nests arrays and objects deeper than " +
                                std::to_string(kMaxJsonDepth) + " levels");
  }
  try {
    return api::Json::parse(text);
  } catch (const api::Json::exception& e) {
    return InvalidArgumentError(std::string("the request body is not valid JSON: ") + e.what());
  }
}

RequestHead HeadOf(const httplib::Request& req) {
  return {req.method, req.path, req.remote_addr};
}

// A successful read of a monitoring route: not a client's request (see http_server.h).
void LogMonitoringRead(const httplib::Request& req) {
  DS_LOG_DEBUG("{} {} 200 from {} (a monitoring read, not counted)", req.method, req.path,
               req.remote_addr);
}

std::string PresentedKey(const httplib::Request& req) {
  std::string auth = req.get_header_value("Authorization");
  // The scheme name is case-insensitive (RFC 9110).
  const std::string bearer = "bearer ";
  if (auth.size() >= bearer.size() &&
      std::equal(bearer.begin(), bearer.end(), auth.begin(), [](char a, char b) {
        return a == std::tolower(static_cast<unsigned char>(b));
      })) {
    return auth.substr(bearer.size());
  }
  return req.get_header_value("x-api-key");
}

}  // namespace

HttpServer::HttpServer(ServerOptions options, ChatService* service)
    : options_(std::move(options)),
      service_(service),
      ledger_(&service_->metrics(), &service_->history()),
      http_(std::make_unique<Routes>()),
      reception_(
          ReceptionFor(options_),
          [this](std::shared_ptr<Connection> connection) { Dispatch(std::move(connection)); },
          [this](const Connection& connection, int status, const std::string& message) {
            ledger_.Record({connection.frame.method, connection.frame.path, connection.peer},
                           status, message);
            return RefusalResponse(connection.frame.path, status, message);
          }) {
  RegisterRoutes();
}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::RegisterRoutes() {
  http_->new_task_queue = [] { return new InlineTasks(); };
  http_->on_accept = [this](int fd) { reception_.Add(fd); };
  http_->set_payload_max_length(options_.max_body_bytes);

  http_->Get("/health", [this](const httplib::Request& req, httplib::Response& res) {
    api::Json body = service_->Load();
    body["status"] = "ok";
    SendJson(res, 200, body);
    LogMonitoringRead(req);
  });
  auto models = [this](const httplib::Request& req, httplib::Response& res) {
    if (!Authorized(api::ApiKind::kChatCompletions, req, res)) return;
    auto now = std::chrono::duration_cast<std::chrono::seconds>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count();
    SendJson(res, 200, api::ModelsList(options_.model_id, options_.aliases, now));
    ledger_.Record(HeadOf(req), 200, "");
  };
  http_->Get("/v1/models", models);
  http_->Get("/models", models);
  // The cache holds users' conversations; its metrics are behind the key too.
  http_->Get("/metrics", [this](const httplib::Request& req, httplib::Response& res) {
    if (!Authorized(api::ApiKind::kChatCompletions, req, res)) return;
    res.set_content(service_->metrics().Render(), "text/plain; version=0.0.4; charset=utf-8");
    LogMonitoringRead(req);
  });

  const std::pair<const char*, api::ApiKind> routes[] = {
      {"/v1/chat/completions", api::ApiKind::kChatCompletions},
      {"/chat/completions", api::ApiKind::kChatCompletions},
      {"/v1/completions", api::ApiKind::kCompletions},
      {"/completions", api::ApiKind::kCompletions},
      {"/v1/responses", api::ApiKind::kResponses},
      {"/responses", api::ApiKind::kResponses},
      {"/v1/messages", api::ApiKind::kAnthropicMessages},
      {"/v1/messages/count_tokens", api::ApiKind::kAnthropicCountTokens},
  };
  // The body is read here, whatever its Content-Type: the library's own reading caps a
  // form-encoded body (what curl -d sends) at 8 KB.
  for (const auto& [path, kind] : routes) {
    http_->Post(path, [this, kind = kind](const httplib::Request& req, httplib::Response& res,
                                          const httplib::ContentReader& read) {
      std::string body;
      read([&body](const char* data, size_t length) {
        body.append(data, length);
        return true;
      });
      HandleApi(kind, req, body, res);
    });
  }
  // The dashboard. Claude Code also probes the base URL with HEAD (served by this GET route)
  // before its first request. The page holds no data; what it shows is behind the key.
  http_->Get("/", [](const httplib::Request& req, httplib::Response& res) {
    res.set_content(DashboardHtml(), "text/html; charset=utf-8");
    LogMonitoringRead(req);
  });
  http_->Get("/v1/stats", [this](const httplib::Request& req, httplib::Response& res) {
    if (!Authorized(api::ApiKind::kChatCompletions, req, res)) return;
    size_t recent = 50;
    if (req.has_param("recent")) {
      recent = static_cast<size_t>(std::clamp(std::atoll(req.get_param_value("recent").c_str()),
                                              1LL, 500LL));
    }
    SendJson(res, 200, service_->history().Stats(recent));
    LogMonitoringRead(req);
  });
  // Errors httplib raises itself (unknown path, body over the limit, bad framing) get a JSON body
  // and are recorded here. It calls this for every status from 400 on; those the handlers
  // answered carry a body, and were recorded where they were made.
  http_->set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    std::string message = res.status == 404   ? "no route for " + req.method + " " + req.path
                          : res.status == 413 ? "the request body is larger than the limit"
                                              : "the request could not be read";
    SendJson(res, res.status,
             {{"error", {{"message", message}, {"type", "invalid_request_error"}}}});
    ledger_.Record(HeadOf(req), res.status, std::move(message));
  });
}

bool HttpServer::HostAllowed(const RequestFrame& frame) const {
  if (!options_.api_key.empty()) return true;
  auto allowed = [this](std::string_view authority) {
    const std::string host = HostName(authority);
    if (IsLoopbackName(host) || host == HostName(options_.host)) return true;
    for (const std::string& extra : options_.allowed_hosts) {
      if (extra == "*" || HostName(extra) == host) return true;
    }
    return false;
  };
  // A client that sends no Host is no browser.
  if (!frame.host.empty() && !allowed(frame.host)) return false;
  // Web pages send an http(s) origin, or "null" from a sandbox; apps have schemes of their own.
  if (frame.origin == "null") return false;
  for (std::string_view scheme : {"http://", "https://"}) {
    if (frame.origin.rfind(scheme, 0) == 0) return allowed(frame.origin.substr(scheme.size()));
  }
  return true;
}

void HttpServer::Dispatch(std::shared_ptr<Connection> connection) {
  if (!HostAllowed(connection->frame)) {
    reception_.Refuse(std::move(connection), 403,
                      "requests from this host or origin are not served without an API key "
                      "(--allow-host adds a host)");
    return;
  }
  WorkerPool& pool = IsLightRoute(connection->frame) ? *light_pool_ : *api_pool_;
  if (!pool.TrySubmit([this, connection] { Serve(connection); })) {
    reception_.Refuse(std::move(connection), 503,
                      "the server is busy: the requests waiting for a handler reached the "
                      "limit (--max-queue); retry shortly");
  }
}

void HttpServer::Serve(const std::shared_ptr<Connection>& connection) {
  ConnectionStream stream(*connection, options_.reception.body_timeout, options_.write_timeout);
  const bool last = ++connection->served >= kMaxRequestsPerConnection;
  bool closed = false;
  const bool answered = http_->ServeRequest(stream, last, closed);
  stream.ConsumeRead();
  if (answered && !closed && !last) {
    reception_.Return(connection);
  } else {
    reception_.Release(connection);
  }
}

bool HttpServer::Authorized(api::ApiKind kind, const httplib::Request& req,
                            httplib::Response& res) {
  if (options_.api_key.empty() || PresentedKey(req) == options_.api_key) return true;
  const std::string message = "invalid or missing API key";
  api::HttpError error = api::AuthenticationError(kind, message);
  SendJson(res, error.status, error.body);
  ledger_.Record(HeadOf(req), error.status, message);
  return false;
}

void HttpServer::Fail(api::ApiKind kind, const httplib::Request& req, const Status& status,
                      httplib::Response& res) {
  SendError(res, kind, status);
  ledger_.Record(HeadOf(req), res.status, status.message());
}

void HttpServer::HandleApi(api::ApiKind kind, const httplib::Request& req,
                           const std::string& body_text, httplib::Response& res) {
  if (!Authorized(kind, req, res)) return;
  StatusOr<api::Json> parsed = ParseBody(body_text);
  if (!parsed.ok()) return Fail(kind, req, parsed.status(), res);
  const api::Json& body = *parsed;
  if (!body.is_object()) {
    return Fail(kind, req, InvalidArgumentError("the request body must be a JSON object"), res);
  }
  StatusOr<api::ChatRequest> request = service_->Parse(kind, body);
  if (!request.ok()) return Fail(kind, req, request.status(), res);
  if (kind == api::ApiKind::kAnthropicCountTokens) {
    StatusOr<int64_t> count = service_->CountTokens(*request);
    if (!count.ok()) return Fail(kind, req, count.status(), res);
    SendJson(res, 200, {{"input_tokens", *count}});
    ledger_.Record(HeadOf(req), 200, "");
    return;
  }
  StatusOr<std::unique_ptr<StartedRequest>> started = service_->Start(std::move(*request));
  if (!started.ok()) return Fail(kind, req, started.status(), res);
  if ((*started)->request.stream) return StreamReply(req, std::move(*started), res);
  JsonResponse response = service_->Complete(started->get());
  SendJson(res, response.status, response.body);
  ledger_.Record(HeadOf(req), response.status, std::move(response.record));
}

void HttpServer::StreamReply(const httplib::Request& req, std::unique_ptr<StartedRequest> started,
                             httplib::Response& res) {
  // httplib calls the provider once the headers are out, and the releaser whether or not the
  // provider ran: a client gone before the first frame still gets its request cancelled in the
  // engine and recorded, through a writer that fails at once.
  struct Streamed {
    std::unique_ptr<StartedRequest> started;
    RequestHead head;
    bool done = false;
  };
  auto streamed = std::make_shared<Streamed>(Streamed{std::move(started), HeadOf(req)});
  auto run = [this, streamed](const std::function<bool(std::string_view)>& write) {
    if (streamed->done) return;
    streamed->done = true;
    RequestRecord record = service_->Stream(streamed->started.get(), write);
    ledger_.Record(streamed->head, 200, std::move(record));
  };
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      "text/event-stream",
      [run](size_t, httplib::DataSink& sink) {
        run([&sink](std::string_view frame) {
          return sink.is_writable() && sink.write(frame.data(), frame.size());
        });
        sink.done();
        return true;
      },
      [run](bool) { run([](std::string_view) { return false; }); });
}

Status HttpServer::Start() {
  light_pool_ = std::make_unique<WorkerPool>(kLightThreads, kLightWaiting);
  api_pool_ = std::make_unique<WorkerPool>(options_.http_threads,
                                           static_cast<size_t>(options_.max_waiting));
  DS_RETURN_IF_ERROR(reception_.Start());
  bound_port_ = options_.port == 0 ? http_->bind_to_any_port(options_.host)
                                   : (http_->bind_to_port(options_.host, options_.port)
                                          ? options_.port
                                          : -1);
  if (bound_port_ < 0) {
    return UnavailableError("cannot listen on " + options_.host + ":" +
                            std::to_string(options_.port) + " (address in use or not local)");
  }
  listener_returned_ = false;
  thread_ = std::thread([this] {
    http_->listen_after_bind();
    listener_returned_ = true;
  });
  // httplib's stop() only interrupts a listener that is already accepting; a Stop() (a signal)
  // before that point would leave it blocked in accept for good. So Start returns once it is.
  while (!http_->is_running()) {
    if (listener_returned_) {
      thread_.join();
      return UnavailableError("the HTTP listener on " + options_.host + ":" +
                              std::to_string(bound_port_) + " stopped as it started");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return OkStatus();
}

void HttpServer::Stop() {
  if (http_->is_running()) http_->stop();
  if (thread_.joinable()) thread_.join();
  reception_.Stop();
  // Requests already handed over finish; their connections then close.
  api_pool_.reset();
  light_pool_.reset();
}

}  // namespace ds::server
