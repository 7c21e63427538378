// The HTTP front against clients that hold connections open, frame requests badly or flood the
// API threads: other clients are still served, /health answers at once, and each bad request
// gets its own clear status instead of a held thread.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "apps/server_fixture.h"

namespace ds::apps {
namespace {

using Clock = std::chrono::steady_clock;

class HttpHardeningTest : public ServerFixture {
 protected:
  double HealthMs() {
    const auto start = Clock::now();
    auto res = client_->Get("/health");
    EXPECT_TRUE(res && res->status == 200);
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  }
};

const json kChat = {{"model", "m"}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}};

// Far more silent and half-sent connections than there are HTTP threads.
TEST_F(HttpHardeningTest, IdleAndPartialConnectionsDoNotShutOthersOut) {
  server::ServerOptions options;
  options.http_threads = 4;
  Start("ok", options);
  std::vector<int> held;
  for (int i = 0; i < 200; ++i) {
    const int fd = Connect();
    if (i % 3 == 1) Send(fd, "GET / HTTP/1.1\r\n");
    if (i % 3 == 2) Send(fd, "POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 100\r\n\r\n{");
    held.push_back(fd);
  }
  EXPECT_LT(HealthMs(), 1000.0);
  json reply = Post("/v1/chat/completions", kChat);
  EXPECT_EQ(reply["choices"][0]["message"]["content"], "ok");
  for (int fd : held) close(fd);
}

// One address over its cap loses its longest-waiting connections, not the new one.
TEST_F(HttpHardeningTest, AnAddressOverItsCapLosesItsOldestIdleConnection) {
  server::ServerOptions options;
  options.reception.max_connections_per_address = 8;
  Start("ok", options);
  std::vector<int> held;
  for (int i = 0; i < 8; ++i) held.push_back(Connect());
  // Wait until the reception has admitted them all.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_LT(HealthMs(), 1000.0);
  // The oldest was closed to make room.
  EXPECT_EQ(Receive(held[0], 1000), "");
  pollfd p{held[0], POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 0), 1);
  char byte;
  EXPECT_EQ(recv(held[0], &byte, 1, 0), 0);
  for (int fd : held) close(fd);
}

TEST_F(HttpHardeningTest, SlowHeadsAndBodiesTimeOutWith408) {
  server::ServerOptions options;
  options.reception.head_timeout = std::chrono::milliseconds(300);
  options.reception.body_timeout = std::chrono::milliseconds(300);
  options.reception.idle_timeout = std::chrono::milliseconds(300);
  Start("ok", options);
  EXPECT_EQ(RawStatus("GET /health HTTP/1.1\r\nHost: x"), 408);
  EXPECT_EQ(RawStatus("POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 10\r\n\r\n{"), 408);
  // A connection that says nothing is closed without an answer.
  const int fd = Connect();
  const auto start = Clock::now();
  EXPECT_EQ(Receive(fd, 3000), "");
  EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(2000));
  close(fd);
}

TEST_F(HttpHardeningTest, BadFramingGetsItsOwnStatus) {
  server::ServerOptions options;
  options.max_body_bytes = 1000;
  Start("ok", options);
  const std::string post = "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\n";
  EXPECT_EQ(RawStatus(post + "\r\n"), 411);
  EXPECT_EQ(RawStatus(post + "Content-Length: -5\r\n\r\n"), 400);
  EXPECT_EQ(RawStatus(post + "Content-Length: 99999999999999999999999\r\n\r\n"), 400);
  EXPECT_EQ(RawStatus(post + "Content-Length: 2000\r\n\r\n"), 413);
  EXPECT_EQ(RawStatus(post + "Content-Length: 3\r\nContent-Length: 4\r\n\r\n"), 400);
  EXPECT_EQ(RawStatus(post + "Transfer-Encoding: gzip\r\n\r\n"), 400);
  EXPECT_EQ(RawStatus("GET /health HTTP/1.1\r\n" + std::string(70000, 'a') + "\r\n\r\n"), 431);
  EXPECT_EQ(RawStatus("NONSENSE\r\n\r\n"), 400);
  // Chunked bodies and pipelined requests.
  const std::string body = kChat.dump();
  const std::string chunked = post + "Transfer-Encoding: chunked\r\n\r\n" +
                              [&] {
                                std::ostringstream hex;
                                hex << std::hex << body.size();
                                return hex.str();
                              }() +
                              "\r\n" + body + "\r\n0\r\n\r\n";
  EXPECT_EQ(RawStatus(chunked), 200);
  const int fd = Connect();
  Send(fd, "GET /health HTTP/1.1\r\nHost: localhost\r\n\r\nGET /health HTTP/1.1\r\nHost: localhost"
           "\r\n\r\n");
  const std::string two = Receive(fd, 3000, "}\nHTTP/1.1 200");
  close(fd);
  EXPECT_EQ(two.find("HTTP/1.1 200", two.find("HTTP/1.1 200") + 1) != std::string::npos, true)
      << two;
}

// curl -d sends its body form-encoded; over 8 KB the HTTP library's own form limit applied.
TEST_F(HttpHardeningTest, AFormEncodedJsonBodyIsReadLikeAnyOther) {
  Start("ok");
  json chat = kChat;
  chat["messages"][0]["content"] = std::string(20000, 'a');
  const std::string body = chat.dump();
  EXPECT_EQ(RawStatus("POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\n"
                      "Content-Type: application/x-www-form-urlencoded\r\n"
                      "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body),
            200);
}

// Without a key, a page on another site cannot drive the server through the browser.
TEST_F(HttpHardeningTest, WithoutAKeyOnlyLocalHostsAndOriginsAreServed) {
  server::ServerOptions options;
  options.allowed_hosts = {"box.lan"};
  Start("ok", options);
  const std::string get = "GET /v1/models HTTP/1.1\r\n";
  EXPECT_EQ(RawStatus(get + "Host: 127.0.0.1:8080\r\n\r\n"), 200);
  EXPECT_EQ(RawStatus(get + "Host: localhost\r\n\r\n"), 200);
  EXPECT_EQ(RawStatus(get + "Host: [::1]:8080\r\n\r\n"), 200);
  EXPECT_EQ(RawStatus(get + "Host: box.lan:8080\r\n\r\n"), 200);
  EXPECT_EQ(RawStatus(get + "Host: attacker.example\r\n\r\n"), 403);
  EXPECT_EQ(RawStatus(get + "Host: localhost\r\nOrigin: http://attacker.example\r\n\r\n"), 403);
  EXPECT_EQ(RawStatus(get + "Host: localhost\r\nOrigin: null\r\n\r\n"), 403);
  EXPECT_EQ(RawStatus(get + "Host: localhost\r\nOrigin: http://localhost:8080\r\n\r\n"), 200);
  EXPECT_EQ(RawStatus(get + "Host: localhost\r\nOrigin: vscode-webview://abc\r\n\r\n"), 200);
}

TEST_F(HttpHardeningTest, WithAKeyAnyHostIsServed) {
  server::ServerOptions options;
  options.api_key = "k";
  Start("ok", options);
  EXPECT_EQ(RawStatus("GET /health HTTP/1.1\r\nHost: attacker.example\r\n\r\n"), 200);
}

// The API threads all busy with a reply their clients do not read: more API requests than may
// wait get 503 at once, and /health still answers on its own threads.
TEST_F(HttpHardeningTest, TheQueueLimitHoldsWhereRequestsWaitAndHealthStaysUp) {
  server::ServerOptions options;
  options.http_threads = 1;
  options.max_waiting = 1;
  options.write_timeout = std::chrono::milliseconds(1500);
  Start("ok", options);
  const auto [held, request] = FillTheApiThreadAndQueue();
  EXPECT_EQ(RawStatus(request, 1000), 503);
  EXPECT_LT(HealthMs(), 500.0);
  for (int fd : held) close(fd);
}

}  // namespace
}  // namespace ds::apps
