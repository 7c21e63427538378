#include "server/connection_stream.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "server/socket_address.h"

namespace ds::server {
namespace {

// Waits for `events` on fd; false on a timeout, an error or a hang-up.
bool WaitFor(int fd, short events, std::chrono::milliseconds timeout) {
  pollfd p{fd, static_cast<short>(events | POLLRDHUP), 0};
  int n;
  do {
    n = poll(&p, 1, static_cast<int>(timeout.count()));
  } while (n < 0 && errno == EINTR);
  if (n <= 0) return false;
  if (p.revents & (POLLERR | POLLHUP | POLLNVAL)) return false;
  // A client that shut its side has gone; what it sent before still reads.
  if ((p.revents & POLLRDHUP) && !(events & POLLIN)) return false;
  return (p.revents & events) != 0;
}

}  // namespace

bool ConnectionStream::is_readable() const {
  return consumed_ < connection_.buffer.size() ||
         WaitFor(connection_.fd, POLLIN, read_timeout_);
}

bool ConnectionStream::is_writable() const {
  return WaitFor(connection_.fd, POLLOUT, write_timeout_);
}

ssize_t ConnectionStream::read(char* ptr, size_t size) {
  const std::string& buffer = connection_.buffer;
  if (consumed_ < buffer.size()) {
    const size_t n = std::min(size, buffer.size() - consumed_);
    std::memcpy(ptr, buffer.data() + consumed_, n);
    consumed_ += n;
    return static_cast<ssize_t>(n);
  }
  if (!WaitFor(connection_.fd, POLLIN, read_timeout_)) return -1;
  ssize_t n;
  do {
    n = recv(connection_.fd, ptr, size, 0);
  } while (n < 0 && errno == EINTR);
  return n;
}

ssize_t ConnectionStream::write(const char* ptr, size_t size) {
  size_t sent = 0;
  while (sent < size) {
    const ssize_t n = send(connection_.fd, ptr + sent, size - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) &&
        WaitFor(connection_.fd, POLLOUT, write_timeout_)) {
      continue;
    }
    return -1;
  }
  return static_cast<ssize_t>(sent);
}

void ConnectionStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  ip = connection_.peer;
  port = connection_.peer_port;
}

void ConnectionStream::get_local_ip_and_port(std::string& ip, int& port) const {
  ip = LocalAddress(connection_.fd, &port);
}

void ConnectionStream::ConsumeRead() {
  connection_.buffer.erase(0, consumed_);
  consumed_ = 0;
}

}  // namespace ds::server
