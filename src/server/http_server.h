// The HTTP front: routes, API-key check, body limits and JSON parsing, on cpp-httplib's thread
// pool. Every API route hands a parsed body to the ChatService; handlers never throw, and every
// error leaves in the API's own error shape (api::ErrorResponse).
// Thread safety: Start()/Stop() from one thread; handlers run on the HTTP threads.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "server/chat_service.h"

namespace httplib {
class Server;
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
  int http_threads = 32;  // connections served at once, including those waiting in the queue
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
  void RegisterRoutes();
  void HandleApi(api::ApiKind kind, const httplib::Request& req, httplib::Response& res);
  // True when no key is configured or the request presents it; else answers 401 in the shape
  // of `kind`.
  bool Authorized(api::ApiKind kind, const httplib::Request& req, httplib::Response& res) const;

  ServerOptions options_;
  ChatService* service_;
  std::unique_ptr<httplib::Server> http_;
  std::thread thread_;
  std::atomic<bool> listener_returned_{false};
  int bound_port_ = 0;
};

}  // namespace ds::server
