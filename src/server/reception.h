// Reads HTTP requests off accepted connections on one thread with epoll, and hands a connection
// to the caller only once a whole request has arrived: a slow, idle or silent client costs a
// file descriptor and a buffer, never a handler thread. Every wait has a deadline (the first
// byte of a request, its head, its body), and the connections one address holds are capped:
// past the cap its oldest connection still waiting for a request is closed, so that a client
// that opens many sockets and sends nothing cannot shut out others.
// Thread safety: Add, Return and Release from any thread; Start and Stop from one.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/status.h"
#include "server/request_framing.h"

namespace ds::server {

struct Connection {
  int fd = -1;
  std::string peer;  // the client's address
  int peer_port = 0;
  std::string buffer;  // bytes received and not yet consumed
  RequestFrame frame;  // the request at the front of `buffer` (complete when handed over)
  int served = 0;      // requests answered on this connection

  // Reception's bookkeeping while the connection waits for a request.
  std::chrono::steady_clock::time_point waiting_since;
  std::chrono::steady_clock::time_point deadline;
};

struct ReceptionOptions {
  FramingLimits framing;
  // A new or kept-alive connection's next request must start within idle_timeout, its head
  // arrive within head_timeout of its first byte, and its body within body_timeout of the head.
  std::chrono::milliseconds idle_timeout{30'000};
  std::chrono::milliseconds head_timeout{10'000};
  std::chrono::milliseconds body_timeout{60'000};
  int max_connections = 4096;
  int max_connections_per_address = 256;
};

class Reception {
 public:
  // Gets each connection whose buffer begins with a complete request (on the reception thread:
  // it must not block); the connection then comes back through Return or Release.
  using Dispatch = std::function<void(std::shared_ptr<Connection>)>;
  // Called once for each request refused here or through Refuse (on any thread): records the
  // refusal (its log line included; the reception logs none of its own) and returns the whole
  // HTTP response to send. connection.frame holds the method and path once the head arrived.
  using Refusal = std::function<std::string(const Connection& connection, int status,
                                            const std::string& message)>;

  Reception(ReceptionOptions options, Dispatch dispatch, Refusal refusal);
  ~Reception();
  Reception(const Reception&) = delete;
  Reception& operator=(const Reception&) = delete;

  Status Start();
  // Closes the connections waiting here; those handed over close on Return or Release.
  void Stop();

  // A connection just accepted.
  void Add(int fd);
  // A connection whose request was answered and stays open for the next one.
  void Return(std::shared_ptr<Connection> connection);
  // A connection that is done.
  void Release(std::shared_ptr<Connection> connection);
  // Answers with the refusal and closes (any thread, the connection not waiting here).
  void Refuse(std::shared_ptr<Connection> connection, int status, const std::string& message);

 private:
  enum class Event { kAdd, kReturn, kRelease };
  struct Posted {
    Event event;
    int fd = -1;
    std::shared_ptr<Connection> connection;
  };

  void Post(Posted posted);
  void Loop();
  void TakePosted();
  void Admit(int fd);
  void Wait(std::shared_ptr<Connection> connection);
  void OnReadable(int fd);
  // Frames the buffer and hands the connection over, refuses it, or keeps waiting.
  void Advance(const std::shared_ptr<Connection>& connection);
  void ExpireDeadlines();
  // Frees room for one more connection of `peer`; false when none can be closed.
  bool MakeRoom(const std::string& peer);
  void CloseWaiting(int fd, int status, const std::string& message);
  void Close(Connection& connection);

  const ReceptionOptions options_;
  const Dispatch dispatch_;
  const Refusal refusal_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  std::thread thread_;

  std::mutex mu_;  // guards posted_ and stopped_
  std::vector<Posted> posted_;
  bool stopped_ = true;

  // The reception thread's own.
  std::map<int, std::shared_ptr<Connection>> waiting_;
  std::map<std::string, int> per_peer_;  // open connections, waiting or handed over
  int open_ = 0;
};

}  // namespace ds::server
