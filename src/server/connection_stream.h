// The HTTP library's view of one request on a connection the reception handed over: the bytes
// already received first (the whole request, and any pipelined bytes after it), then the socket,
// with a deadline on every wait.
// Thread safety: one handler thread at a time, like the connection it reads.
#pragma once

#include <httplib.h>

#include <chrono>

#include "server/reception.h"

namespace ds::server {

class ConnectionStream : public httplib::Stream {
 public:
  ConnectionStream(Connection& connection, std::chrono::milliseconds read_timeout,
                   std::chrono::milliseconds write_timeout)
      : connection_(connection), read_timeout_(read_timeout), write_timeout_(write_timeout) {}

  bool is_readable() const override;
  // False once the client has hung up or stopped reading for the write timeout: a streamed
  // reply then ends.
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return connection_.fd; }

  // Drops the bytes the request took from the connection's buffer, keeping what follows.
  void ConsumeRead();

 private:
  Connection& connection_;
  const std::chrono::milliseconds read_timeout_;
  const std::chrono::milliseconds write_timeout_;
  size_t consumed_ = 0;
};

}  // namespace ds::server
