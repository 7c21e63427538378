#include "server/reception.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "base/log.h"
#include "server/socket_address.h"

namespace ds::server {
namespace {

using Clock = std::chrono::steady_clock;

// What one wake reads from a connection before the others get their turn.
constexpr size_t kReadSlice = size_t{256} << 10;
// The wake that checks deadlines when no socket stirs.
constexpr int kTickMs = 250;

// One non-blocking send of a short answer: a client that does not read it loses it.
void SendOnce(int fd, const std::string& bytes) {
  [[maybe_unused]] ssize_t sent = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

}  // namespace

Reception::Reception(ReceptionOptions options, Dispatch dispatch, Refusal refusal)
    : options_(std::move(options)), dispatch_(std::move(dispatch)), refusal_(std::move(refusal)) {}

Reception::~Reception() { Stop(); }

Status Reception::Start() {
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (epoll_fd_ < 0 || wake_fd_ < 0) return InternalError("cannot create the connection poller");
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = wake_fd_;
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_ = false;
  }
  thread_ = std::thread([this] { Loop(); });
  return OkStatus();
}

void Reception::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof(one));
  thread_.join();
  // What was posted after the loop's last look.
  for (Posted& posted : posted_) {
    if (posted.event == Event::kAdd) close(posted.fd);
    if (posted.connection) close(posted.connection->fd);
  }
  posted_.clear();
  for (auto& [fd, connection] : waiting_) close(fd);
  waiting_.clear();
  close(epoll_fd_);
  close(wake_fd_);
}

void Reception::Post(Posted posted) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stopped_) {
      posted_.push_back(std::move(posted));
      // Under the lock: Stop closes the wake descriptor only once stopped_ is set.
      uint64_t one = 1;
      [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof(one));
      return;
    }
  }
  // Stopped: nobody will take it, so it closes here.
  if (posted.event == Event::kAdd) close(posted.fd);
  if (posted.connection) close(posted.connection->fd);
}

void Reception::Add(int fd) { Post({Event::kAdd, fd, nullptr}); }

void Reception::Return(std::shared_ptr<Connection> connection) {
  Post({Event::kReturn, -1, std::move(connection)});
}

void Reception::Release(std::shared_ptr<Connection> connection) {
  Post({Event::kRelease, -1, std::move(connection)});
}

void Reception::Refuse(std::shared_ptr<Connection> connection, int status,
                       const std::string& message) {
  SendOnce(connection->fd, refusal_(*connection, status, message));
  Release(std::move(connection));
}

void Reception::Loop() {
  epoll_event events[64];
  while (true) {
    const int n = epoll_wait(epoll_fd_, events, 64, kTickMs);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopped_) return;
    }
    for (int i = 0; i < n; ++i) {
      if (events[i].data.fd == wake_fd_) {
        uint64_t count;
        [[maybe_unused]] ssize_t r = read(wake_fd_, &count, sizeof(count));
        continue;
      }
      OnReadable(events[i].data.fd);
    }
    TakePosted();
    ExpireDeadlines();
  }
}

void Reception::TakePosted() {
  std::vector<Posted> posted;
  {
    std::lock_guard<std::mutex> lock(mu_);
    posted.swap(posted_);
  }
  for (Posted& p : posted) {
    switch (p.event) {
      case Event::kAdd:
        Admit(p.fd);
        break;
      case Event::kReturn:
        p.connection->frame = {};
        Wait(std::move(p.connection));
        break;
      case Event::kRelease:
        Close(*p.connection);
        break;
    }
  }
}

void Reception::Admit(int fd) {
  auto connection = std::make_shared<Connection>();
  connection->fd = fd;
  connection->peer = PeerAddress(fd, &connection->peer_port);
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  if (!MakeRoom(connection->peer)) {
    SendOnce(fd, refusal_(*connection, 503,
                          "too many open connections (" + std::to_string(open_) + ")"));
    close(fd);
    return;
  }
  ++open_;
  ++per_peer_[connection->peer];
  Wait(std::move(connection));
}

bool Reception::MakeRoom(const std::string& peer) {
  const bool peer_full = per_peer_[peer] >= options_.max_connections_per_address;
  if (!peer_full && open_ < options_.max_connections) return true;
  // The connection that has waited longest for a request: of this address when it is the one
  // over its cap, else of any.
  std::shared_ptr<Connection> oldest;
  for (const auto& [fd, connection] : waiting_) {
    if (peer_full && connection->peer != peer) continue;
    if (!oldest || connection->waiting_since < oldest->waiting_since) oldest = connection;
  }
  if (!oldest) return false;
  DS_LOG_DEBUG("closing the longest-waiting connection of {} to make room", oldest->peer);
  CloseWaiting(oldest->fd, 0, "");
  return true;
}

void Reception::Wait(std::shared_ptr<Connection> connection) {
  const Clock::time_point now = Clock::now();
  connection->waiting_since = now;
  connection->deadline = now + options_.idle_timeout;
  // Pipelined bytes may already hold the next request.
  if (!connection->buffer.empty()) {
    connection->deadline = now + options_.head_timeout;
    waiting_[connection->fd] = connection;
    Advance(connection);
    if (!waiting_.contains(connection->fd)) return;
  }
  waiting_[connection->fd] = connection;
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP;
  ev.data.fd = connection->fd;
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, connection->fd, &ev);
}

void Reception::OnReadable(int fd) {
  auto it = waiting_.find(fd);
  if (it == waiting_.end()) return;
  std::shared_ptr<Connection> connection = it->second;
  const bool was_empty = connection->buffer.empty();
  const size_t cap = options_.framing.max_head_bytes + options_.framing.max_body_bytes + 4096;
  size_t taken = 0;
  char chunk[64 << 10];
  while (taken < kReadSlice && connection->buffer.size() < cap) {
    const ssize_t n = recv(fd, chunk, sizeof(chunk), 0);
    if (n > 0) {
      connection->buffer.append(chunk, static_cast<size_t>(n));
      taken += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n < 0 && errno == EINTR) continue;
    // Closed by the client (or failed) before a whole request arrived.
    CloseWaiting(fd, 0, "");
    return;
  }
  if (was_empty && !connection->buffer.empty()) {
    connection->deadline = Clock::now() + options_.head_timeout;
  }
  Advance(connection);
}

void Reception::Advance(const std::shared_ptr<Connection>& connection) {
  const bool had_head = connection->frame.head_bytes > 0;
  connection->frame = FrameRequest(connection->buffer, options_.framing);
  RequestFrame& frame = connection->frame;
  switch (frame.state) {
    case RequestFrame::State::kIncomplete:
      if (!had_head && frame.head_bytes > 0) {
        connection->deadline = Clock::now() + options_.body_timeout;
        // A client that asked to be told before it sends the body.
        std::string_view head(connection->buffer.data(), frame.head_bytes);
        if (head.find("100-continue") != std::string_view::npos) {
          SendOnce(connection->fd, "HTTP/1.1 100 Continue\r\n\r\n");
        }
      }
      return;
    case RequestFrame::State::kRefused:
      CloseWaiting(connection->fd, frame.status, frame.reason);
      return;
    case RequestFrame::State::kComplete:
      epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, connection->fd, nullptr);
      waiting_.erase(connection->fd);
      dispatch_(connection);
      return;
  }
}

void Reception::ExpireDeadlines() {
  const Clock::time_point now = Clock::now();
  std::vector<int> expired;
  for (const auto& [fd, connection] : waiting_) {
    if (connection->deadline <= now) expired.push_back(fd);
  }
  for (int fd : expired) {
    const Connection& connection = *waiting_[fd];
    if (connection.buffer.empty()) {
      CloseWaiting(fd, 0, "");  // an idle connection: closed without a word
      continue;
    }
    const bool head = connection.frame.head_bytes > 0;
    CloseWaiting(fd, 408, std::string("the request ") + (head ? "body" : "line and headers") +
                              " did not arrive in time");
  }
}

void Reception::CloseWaiting(int fd, int status, const std::string& message) {
  auto it = waiting_.find(fd);
  if (it == waiting_.end()) return;
  std::shared_ptr<Connection> connection = std::move(it->second);
  waiting_.erase(it);
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  if (status != 0) SendOnce(fd, refusal_(*connection, status, message));
  Close(*connection);
}

void Reception::Close(Connection& connection) {
  if (connection.fd < 0) return;
  close(connection.fd);
  connection.fd = -1;
  --open_;
  if (--per_peer_[connection.peer] <= 0) per_peer_.erase(connection.peer);
}

}  // namespace ds::server
