// Time-boxed fuzzing of the HTTP front with raw bytes on sockets: captured client requests,
// mutated or not, behind random methods, paths, headers and framing (lengths short, long or
// absent, chunked, pipelined, garbage). Every request must get a status line (a timeout's 408
// included) that is not a 5xx other than 503, within seconds, /health must keep answering, and
// every refusal must be recorded (logged, counted and shown).
// DS_FUZZ_SECONDS bounds the run (default 5); scripts/test.sh runs it longer under ASan+UBSan.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "apps/server_fixture.h"
#include "apps/test_captures.h"
#include "server/request_framing.h"

namespace ds::apps {
namespace {

using Clock = std::chrono::steady_clock;

double FuzzSeconds() {
  const char* env = std::getenv("DS_FUZZ_SECONDS");
  return env != nullptr ? std::atof(env) : 5.0;
}

struct Seed {
  std::string path;
  std::string body;
};

std::vector<Seed> Seeds() {
  std::vector<Seed> seeds;
  for (Capture& capture : LoadCaptures()) {
    capture.body["max_tokens"] = 4;
    seeds.push_back({capture.url, capture.body.dump()});
  }
  seeds.push_back({"/v1/chat/completions",
                   R"({"messages":[{"role":"user","content":"hi"}],"max_tokens":4})"});
  seeds.push_back({"/v1/messages",
                   R"({"model":"m","max_tokens":4,"messages":[{"role":"user","content":"hi"}]})"});
  seeds.push_back({"/v1/completions", R"({"prompt":"hi","max_tokens":4})"});
  seeds.push_back({"/v1/responses", R"({"input":"hi","max_output_tokens":4})"});
  return seeds;
}

class Mutator {
 public:
  explicit Mutator(uint32_t seed) : rng_(seed) {}

  size_t Below(size_t n) { return n == 0 ? 0 : rng_() % n; }
  bool OneIn(size_t n) { return Below(n) == 0; }

  std::string MutateBody(std::string text) {
    if (text.empty()) return text;
    switch (Below(6)) {
      case 0:
        for (int k = 0; k < 4; ++k) text[Below(text.size())] = static_cast<char>(rng_());
        break;
      case 1:
        text.resize(Below(text.size()));
        break;
      case 2: {
        static const char* kValues[] = {"null", "[]", "{}", "-1", "1e308", "\"x\"", "true",
                                        "[[[[[[[[[[[[]]]]]]]]]]]]", "\"\\ud800\""};
        const size_t colon = text.find(':', Below(text.size()));
        if (colon != std::string::npos) text.insert(colon + 1, kValues[Below(9)]);
        break;
      }
      case 3: {
        const size_t at = Below(text.size());
        text.insert(at, text.substr(at, Below(256)));
        break;
      }
      case 4:
        text.insert(Below(text.size()), std::string(Below(400), OneIn(2) ? '[' : '{'));
        break;
      default:
        break;  // the body as the client sent it
    }
    return text;
  }

  std::string Request(const Seed& seed) {
    static const char* kMethods[] = {"POST", "POST", "POST", "GET", "PUT", "DELETE", "HEAD",
                                     "OPTIONS", "P\x01ST", ""};
    static const char* kPaths[] = {"/health", "/metrics", "/v1/models", "/", "/v1/stats",
                                   "/nowhere", "/v1/messages/count_tokens", "*",
                                   "/v1/chat/completions?x=%zz", "//../../etc/passwd"};
    const std::string method = kMethods[Below(10)];
    const std::string path = OneIn(3) ? kPaths[Below(10)] : seed.path;
    std::string body = OneIn(3) ? seed.body : MutateBody(seed.body);
    std::string head = method + " " + path + (OneIn(30) ? " HTTP/9.9" : " HTTP/1.1") + "\r\n";
    if (!OneIn(10)) head += "Host: localhost\r\n";
    head += "Connection: close\r\n";
    static const char* kTypes[] = {"application/json", "application/x-www-form-urlencoded",
                                   "text/plain", "multipart/form-data; boundary=x", ""};
    head += std::string("Content-Type: ") + kTypes[Below(5)] + "\r\n";
    if (OneIn(8)) head += std::string(Below(2000), 'X') + ": " + std::string(Below(100), 'y') + "\r\n";
    if (OneIn(10)) head += "no colon here\r\n";
    if (OneIn(10)) head += "Expect: 100-continue\r\n";
    if (OneIn(15)) head += "Authorization: bEaReR nope\r\n";
    if (OneIn(15)) head += "Origin: http://elsewhere.example\r\n";
    switch (Below(7)) {
      case 0:  // chunked, split at random
      {
        head += "Transfer-Encoding: chunked\r\n\r\n";
        size_t at = 0;
        while (at < body.size()) {
          const size_t n = std::min(body.size() - at, 1 + Below(4096));
          std::ostringstream hex;
          hex << std::hex << n;
          head += hex.str() + (OneIn(10) ? ";ext=1" : "") + "\r\n" + body.substr(at, n) + "\r\n";
          at += n;
        }
        return head + (OneIn(10) ? "zz\r\n" : "0\r\n\r\n");
      }
      case 1:  // a length that disagrees with the body
        return head + "Content-Length: " + std::to_string(Below(body.size() * 2 + 2)) +
               "\r\n\r\n" + body;
      case 2:  // no length at all
        return head + "\r\n" + body;
      case 3: {  // a malformed length
        static const char* kLengths[] = {"-1", "1e3", "0x10", "99999999999999999999", " ",
                                         "12, 12", "+5"};
        return head + "Content-Length: " + kLengths[Below(7)] + "\r\n\r\n" + body;
      }
      case 4:  // two lengths
        return head + "Content-Length: " + std::to_string(body.size()) +
               "\r\nContent-Length: " + std::to_string(body.size() + Below(3)) + "\r\n\r\n" +
               body;
      default:
        return head + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    }
  }

 private:
  std::mt19937 rng_;
};

class HttpFuzzTest : public ServerFixture {
 protected:
  // Every refusal the clients saw was recorded, and /metrics and /v1/stats count the same
  // requests (pipelined bytes can make more requests than the clients sent). Replies still
  // streaming are recorded as they end, so both are read until they agree.
  void ExpectEveryRefusalRecorded(int refused) {
    double counted = -1;
    int64_t shown = -2;
    const auto end = Clock::now() + std::chrono::seconds(10);
    while (counted != static_cast<double>(shown) && Clock::now() < end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      auto metrics = client_->Get("/metrics");
      auto stats = client_->Get("/v1/stats");
      ASSERT_TRUE(metrics && stats);
      counted = 0;
      std::istringstream lines(metrics->body);
      for (std::string line; std::getline(lines, line);) {
        if (line.rfind("deltaserve_http_requests_total{", 0) != 0) continue;
        counted += std::stod(line.substr(line.rfind(' ') + 1));
      }
      shown = json::parse(stats->body)["since_start"]["requests"].get<int64_t>();
    }
    EXPECT_EQ(counted, static_cast<double>(shown));
    EXPECT_GE(counted, refused);
  }

  // The status of the reply to `bytes`, 0 when the server closed without one, -1 when nothing
  // came within `timeout_ms`. Safe from several threads.
  int Exchange(const std::string& bytes, int timeout_ms) {
    const int fd = Connect();
    size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) break;  // the server may close early on a refusal
      sent += static_cast<size_t>(n);
    }
    std::string reply;
    char buf[4096];
    const auto end = Clock::now() + std::chrono::milliseconds(timeout_ms);
    int status = -1;
    while (Clock::now() < end) {
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      const ssize_t n = recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) {
        status = 0;
        break;
      }
      reply.append(buf, static_cast<size_t>(n));
      // Interim 100 Continue answers come before the real one.
      while (reply.rfind("HTTP/1.1 100", 0) == 0 && reply.find("\r\n\r\n") != std::string::npos) {
        reply.erase(0, reply.find("\r\n\r\n") + 4);
      }
      if (reply.size() >= 12 && reply.rfind("HTTP/1.1 ", 0) == 0) {
        status = std::atoi(reply.substr(9, 3).c_str());
        break;
      }
    }
    close(fd);
    return status;
  }
};

TEST_F(HttpFuzzTest, AnyRequestGetsAStatusAndTheServerStaysUp) {
  server::ServerOptions options;
  options.max_body_bytes = 4 << 20;
  options.reception.head_timeout = std::chrono::milliseconds(500);
  options.reception.body_timeout = std::chrono::milliseconds(500);
  options.reception.idle_timeout = std::chrono::milliseconds(500);
  options.write_timeout = std::chrono::milliseconds(1000);
  Start("ok", options, SharedTemplate("Qwen3.5-4B"));
  const std::vector<Seed> seeds = Seeds();
  const auto deadline = Clock::now() + std::chrono::duration<double>(FuzzSeconds());
  // Many requests wait out a short deadline (a length longer than the body), so clients run
  // side by side.
  constexpr int kClients = 8;
  std::atomic<int> requests{0};
  std::atomic<int> closed_without_status{0};
  std::atomic<int> refused{0};
  std::mutex mu;
  std::vector<std::string> failures;
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      Mutator mutator(20261207 + c);
      while (Clock::now() < deadline || requests < 100) {
        const std::string request = mutator.Request(seeds[mutator.Below(seeds.size())]);
        const int status = Exchange(request, 30000);
        ++requests;
        if (status == 0) ++closed_without_status;
        if (status >= 400) ++refused;
        if (status == -1 || (status >= 500 && status != 503)) {
          std::lock_guard<std::mutex> lock(mu);
          failures.push_back(std::to_string(status) + " for:\n" + request.substr(0, 500));
        }
      }
    });
  }
  double slowest_health_ms = 0;
  while (Clock::now() < deadline) {
    const auto start = Clock::now();
    auto health = client_->Get("/health");
    ASSERT_TRUE(health && health->status == 200);
    slowest_health_ms =
        std::max(slowest_health_ms,
                 std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  for (std::thread& t : clients) t.join();
  std::printf("fuzzed %d requests: %d closed without a status, slowest /health %.1f ms\n",
              requests.load(), closed_without_status.load(), slowest_health_ms);
  for (size_t i = 0; i < failures.size() && i < 5; ++i) ADD_FAILURE() << failures[i];
  EXPECT_TRUE(failures.empty()) << failures.size() << " requests failed (-1: no answer in 30 s)";
  // A close without a status is for connections the client itself cut short; most requests
  // must have been answered.
  EXPECT_LT(closed_without_status, requests / 4);
  EXPECT_LT(slowest_health_ms, 1000.0);
  ExpectEveryRefusalRecorded(refused);
}

// The framing parser on arbitrary bytes: a verdict always, and a complete frame never longer
// than what arrived.
TEST(RequestFramingFuzz, AnyBytesGetAVerdict) {
  Mutator mutator(7);
  const std::vector<Seed> seeds = Seeds();
  server::FramingLimits limits;
  limits.max_body_bytes = 1 << 20;
  const auto deadline = Clock::now() + std::chrono::duration<double>(FuzzSeconds());
  int frames = 0;
  while (Clock::now() < deadline || frames < 1000) {
    std::string bytes = mutator.Request(seeds[mutator.Below(seeds.size())]);
    for (int k = 0; k < 3; ++k) {
      if (!bytes.empty() && mutator.OneIn(2)) {
        bytes[mutator.Below(bytes.size())] = static_cast<char>(mutator.Below(256));
      }
    }
    bytes.resize(mutator.Below(bytes.size() + 1));
    const server::RequestFrame frame = server::FrameRequest(bytes, limits);
    ++frames;
    if (frame.state == server::RequestFrame::State::kComplete) {
      ASSERT_LE(frame.size, bytes.size());
      ASSERT_LE(frame.head_bytes, frame.size);
    }
    if (frame.state == server::RequestFrame::State::kRefused) {
      ASSERT_TRUE(frame.status == 400 || frame.status == 411 || frame.status == 413 ||
                  frame.status == 431)
          << frame.status;
    }
  }
}

}  // namespace
}  // namespace ds::apps
