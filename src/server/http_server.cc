#include "server/http_server.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "api/models.h"
#include "base/json_depth.h"
#include "base/log.h"
#include "server/dashboard_page.h"

namespace ds::server {
namespace {

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

std::string PresentedKey(const httplib::Request& req) {
  std::string auth = req.get_header_value("Authorization");
  const std::string bearer = "Bearer ";
  if (auth.compare(0, bearer.size(), bearer) == 0) return auth.substr(bearer.size());
  return req.get_header_value("x-api-key");
}

}  // namespace

HttpServer::HttpServer(ServerOptions options, ChatService* service)
    : options_(std::move(options)), service_(service),
      http_(std::make_unique<httplib::Server>()) {
  RegisterRoutes();
}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::RegisterRoutes() {
  http_->new_task_queue = [threads = options_.http_threads] {
    return new httplib::ThreadPool(threads);
  };
  http_->set_payload_max_length(options_.max_body_bytes);
  http_->set_read_timeout(std::chrono::seconds(600));
  http_->set_write_timeout(std::chrono::seconds(600));

  http_->Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    api::Json body = service_->Load();
    body["status"] = "ok";
    SendJson(res, 200, body);
  });
  auto models = [this](const httplib::Request& req, httplib::Response& res) {
    if (!Authorized(api::ApiKind::kChatCompletions, req, res)) return;
    auto now = std::chrono::duration_cast<std::chrono::seconds>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count();
    SendJson(res, 200, api::ModelsList(options_.model_id, options_.aliases, now));
  };
  http_->Get("/v1/models", models);
  http_->Get("/models", models);
  // The cache holds users' conversations; its metrics are behind the key too.
  http_->Get("/metrics", [this](const httplib::Request& req, httplib::Response& res) {
    if (!Authorized(api::ApiKind::kChatCompletions, req, res)) return;
    res.set_content(service_->metrics().Render(), "text/plain; version=0.0.4; charset=utf-8");
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
  for (const auto& [path, kind] : routes) {
    http_->Post(path, [this, kind = kind](const httplib::Request& req, httplib::Response& res) {
      HandleApi(kind, req, res);
    });
  }
  // The dashboard. Claude Code also probes the base URL with HEAD (served by this GET route)
  // before its first request. The page holds no data; what it shows is behind the key.
  http_->Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(DashboardHtml(), "text/html; charset=utf-8");
  });
  http_->Get("/v1/stats", [this](const httplib::Request& req, httplib::Response& res) {
    if (!Authorized(api::ApiKind::kChatCompletions, req, res)) return;
    size_t recent = 50;
    if (req.has_param("recent")) {
      recent = static_cast<size_t>(std::clamp(std::atoll(req.get_param_value("recent").c_str()),
                                              1LL, 500LL));
    }
    SendJson(res, 200, service_->history().Stats(recent));
  });
  // Errors httplib raises itself (unknown path, body over the limit, bad framing) get a JSON body.
  http_->set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    std::string message = res.status == 404   ? "no route for " + req.method + " " + req.path
                          : res.status == 413 ? "the request body is larger than the limit"
                                              : "the request could not be read";
    SendJson(res, res.status,
             {{"error", {{"message", message}, {"type", "invalid_request_error"}}}});
  });
}

bool HttpServer::Authorized(api::ApiKind kind, const httplib::Request& req,
                            httplib::Response& res) const {
  if (options_.api_key.empty() || PresentedKey(req) == options_.api_key) return true;
  api::HttpError error = api::AuthenticationError(kind, "invalid or missing API key");
  SendJson(res, error.status, error.body);
  return false;
}

void HttpServer::HandleApi(api::ApiKind kind, const httplib::Request& req,
                           httplib::Response& res) {
  if (!Authorized(kind, req, res)) return;
  StatusOr<api::Json> parsed = ParseBody(req.body);
  if (!parsed.ok()) return SendError(res, kind, parsed.status());
  const api::Json& body = *parsed;
  if (!body.is_object()) {
    SendError(res, kind, InvalidArgumentError("the request body must be a JSON object"));
    return;
  }
  StatusOr<api::ChatRequest> request = service_->Parse(kind, body);
  if (!request.ok()) return SendError(res, kind, request.status());
  if (kind == api::ApiKind::kAnthropicCountTokens) {
    StatusOr<int64_t> count = service_->CountTokens(*request);
    if (!count.ok()) return SendError(res, kind, count.status());
    SendJson(res, 200, {{"input_tokens", *count}});
    return;
  }
  StatusOr<std::unique_ptr<StartedRequest>> started = service_->Start(std::move(*request));
  if (!started.ok()) return SendError(res, kind, started.status());
  if (!(*started)->request.stream) {
    JsonResponse response = service_->Complete(started->get());
    SendJson(res, response.status, response.body);
    return;
  }
  std::shared_ptr<StartedRequest> shared = std::move(*started);
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      "text/event-stream", [this, shared](size_t, httplib::DataSink& sink) {
        service_->Stream(shared.get(), [&sink](std::string_view frame) {
          return sink.is_writable() && sink.write(frame.data(), frame.size());
        });
        sink.done();
        return true;
      });
}

Status HttpServer::Start() {
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
}

}  // namespace ds::server
