// The HTTP front: routes, API-key and Host checks, body limits and JSON parsing. Connections
// are read by the reception (reception.h) until a whole request has arrived; then the request
// runs on one of two worker pools, a small one for the cheap routes (/health, /metrics, models,
// stats, the dashboard), so that they answer while every API thread is busy, and one for the
// API routes, whose waiting requests are bounded (max_waiting; beyond, 503). cpp-httplib parses
// each request and writes its response. Every API route hands a parsed body to the ChatService;
// handlers never throw, and every error leaves in the API's own error shape
// (api::ErrorResponse). Every request's end goes to the request ledger once, from where it was
// decided (request_ledger.h), except successful reads of the monitoring routes (/health,
// /metrics, /v1/stats and the dashboard page), which scrapes and the dashboard's own polling
// would otherwise bury the clients' requests under.
// Thread safety: Start()/Stop() from one thread; handlers run on the worker threads.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "server/chat_service.h"
#include "server/reception.h"
#include "server/request_ledger.h"
#include "server/worker_pool.h"

namespace httplib {
struct Request;
struct Response;
}  // namespace httplib

namespace ds::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: any free port (tests)
  std::string api_key;  // empty: no authentication
  std::string model_id;  // the name /v1/models lists first
  std::vector<std::string> aliases;  // more names /v1/models lists; any name is served anyway
  int64_t max_body_bytes = int64_t{64} << 20;
  int http_threads = 32;  // API requests handled at once, streams included
  int max_waiting = 64;   // API requests waiting for a thread; beyond, 503 (--max-queue)
  // Without an API key, only requests whose Host (and Origin, when sent) names a loopback
  // address, `host` or one of these are served, so that a web page cannot drive the server;
  // "*" accepts any.
  std::vector<std::string> allowed_hosts;
  ReceptionOptions reception;  // timeouts and connection caps; framing comes from max_body_bytes
  std::chrono::milliseconds write_timeout{60'000};  // a client that stops reading a reply
};

class HttpServer {
 public:
  HttpServer(ServerOptions options, ChatService* service);
  ~HttpServer();

  // Binds and starts serving on a background thread, and returns once it accepts connections.
  // Unavailable when the address is taken.
  Status Start();
  int port() const { return bound_port_; }
  // Stops accepting and waits for the serving thread.
  void Stop();

 private:
  class Routes;

  void RegisterRoutes();
  // On the reception thread: checks the Host and hands the request to its pool.
  void Dispatch(std::shared_ptr<Connection> connection);
  // On a worker thread: one request and its response, then the connection goes back.
  void Serve(const std::shared_ptr<Connection>& connection);
  bool HostAllowed(const RequestFrame& frame) const;
  void HandleApi(api::ApiKind kind, const httplib::Request& req, const std::string& body_text,
                 httplib::Response& res);
  // Answers a started streaming request with SSE frames, and records it once it ended.
  void StreamReply(const httplib::Request& req, std::unique_ptr<StartedRequest> started,
                   httplib::Response& res);
  // Answers `status` in the shape of `kind` and records it.
  void Fail(api::ApiKind kind, const httplib::Request& req, const Status& status,
            httplib::Response& res);
  // True when no key is configured or the request presents it; else answers 401 in the shape
  // of `kind` and records it.
  bool Authorized(api::ApiKind kind, const httplib::Request& req, httplib::Response& res);

  ServerOptions options_;
  ChatService* service_;
  RequestLedger ledger_;
  std::unique_ptr<Routes> http_;
  Reception reception_;
  std::unique_ptr<WorkerPool> light_pool_;
  std::unique_ptr<WorkerPool> api_pool_;
  std::thread thread_;
  std::atomic<bool> listener_returned_{false};
  int bound_port_ = 0;
};

}  // namespace ds::server
