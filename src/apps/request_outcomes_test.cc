// Every request, whatever its outcome and wherever it was decided (a refusal before any handler
// runs, a handler, the HTTP library's own errors, the end of a stream), leaves one log line at
// info level with its method, path, status and reason, one count in
// deltaserve_http_requests_total{status, outcome}, and one row in /v1/stats. Before, 400s and
// 401s left no trace at all, and the dashboard counted only the requests the engine ran.
#include <chrono>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "apps/log_capture.h"
#include "apps/server_fixture.h"

namespace ds::apps {
namespace {

using Clock = std::chrono::steady_clock;

const json kChat = {{"model", "m"}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}};
constexpr const char* kKey = "k";

class RequestOutcomesTest : public ServerFixture {
 protected:
  // The request lines logged so far: "METHOD PATH STATUS OUTCOME from PEER...".
  std::vector<std::string> RequestLines() const {
    static const std::regex kRequestLine(R"(^\S+ \S+ \d{3} (ok|rejected|busy|error|cancelled) )");
    std::vector<std::string> lines;
    for (const std::string& message : log_.InfoMessages()) {
      if (std::regex_search(message, kRequestLine)) lines.push_back(message);
    }
    return lines;
  }

  // The request lines that begin with `prefix`.
  std::vector<std::string> LinesStartingWith(const std::string& prefix) const {
    std::vector<std::string> found;
    for (const std::string& line : RequestLines()) {
      if (line.rfind(prefix, 0) == 0) found.push_back(line);
    }
    return found;
  }

  // Waits up to 10 s for `n` request lines.
  void WaitForRequestLines(size_t n) const {
    const auto end = Clock::now() + std::chrono::seconds(10);
    while (RequestLines().size() < n && Clock::now() < end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  // deltaserve_http_requests_total{outcome, status} as /metrics renders it.
  double Count(int status, const std::string& outcome) {
    auto res = client_->Get("/metrics", Auth());
    EXPECT_TRUE(res && res->status == 200);
    if (!res) return -1;
    const std::string sample = "deltaserve_http_requests_total{outcome=\"" + outcome +
                               "\",status=\"" + std::to_string(status) + "\"} ";
    const size_t at = res->body.find(sample);
    return at == std::string::npos ? 0 : std::stod(res->body.substr(at + sample.size()));
  }

  json Stats() {
    auto res = client_->Get("/v1/stats", Auth());
    EXPECT_TRUE(res && res->status == 200);
    return res ? json::parse(res->body) : json();
  }

  // The status of a reply, 0 when none came.
  static int StatusOf(const httplib::Result& res) { return res ? res->status : 0; }

  static httplib::Headers Auth() { return {{"Authorization", std::string("Bearer ") + kKey}}; }

  LogCapture log_;
};

TEST_F(RequestOutcomesTest, HandlerAnswersAreLoggedCountedAndShown) {
  server::ServerOptions options;
  options.api_key = kKey;
  Start("ok", options);
  auto post = [&](const std::string& path, const std::string& body, httplib::Headers headers) {
    return StatusOf(client_->Post(path, headers, body, "application/json"));
  };
  EXPECT_EQ(post("/v1/chat/completions", "{nope", Auth()), 400);
  EXPECT_EQ(post("/v1/messages", R"({"model":"m","messages":5})", Auth()), 400);
  json too_long = {{"prompt", std::vector<int>(300000, 1)}, {"max_tokens", 1}};
  EXPECT_EQ(post("/v1/completions", too_long.dump(), Auth()), 400);
  EXPECT_EQ(post("/v1/chat/completions", kChat.dump(), {}), 401);
  EXPECT_EQ(StatusOf(client_->Get("/v1/stats")), 401);
  EXPECT_EQ(StatusOf(client_->Get("/nowhere", Auth())), 404);
  EXPECT_EQ(post("/v1/chat/completions", kChat.dump(), Auth()), 200);
  EXPECT_EQ(post("/v1/messages/count_tokens", kChat.dump(), Auth()), 200);
  // Reads of the monitoring routes that succeed are not requests of the clients: the dashboard
  // polls every 2 s and Prometheus scrapes.
  EXPECT_EQ(StatusOf(client_->Get("/health")), 200);
  EXPECT_EQ(StatusOf(client_->Get("/metrics", Auth())), 200);

  const std::vector<std::string> lines = RequestLines();
  EXPECT_EQ(lines.size(), 8u) << ::testing::PrintToString(lines);
  const std::pair<std::string, std::string> expected[] = {
      {"POST /v1/chat/completions 400 rejected from 127.0.0.1: ", "not valid JSON"},
      {"POST /v1/messages 400 rejected from 127.0.0.1: ", "messages"},
      {"POST /v1/completions 400 rejected from 127.0.0.1: ", "context"},
      {"POST /v1/chat/completions 401 rejected from 127.0.0.1: ", "API key"},
      {"GET /v1/stats 401 rejected from 127.0.0.1: ", "API key"},
      {"GET /nowhere 404 rejected from 127.0.0.1: ", "no route for GET /nowhere"},
      {"POST /v1/chat/completions 200 ok from 127.0.0.1 uid=chatcmpl-", "MISS(nothing_cached)"},
      {"POST /v1/messages/count_tokens 200 ok from 127.0.0.1", ""},
  };
  for (const auto& [prefix, reason] : expected) {
    const std::vector<std::string> found = LinesStartingWith(prefix);
    ASSERT_EQ(found.size(), 1u) << prefix << "\n" << ::testing::PrintToString(lines);
    EXPECT_NE(found[0].find(reason), std::string::npos) << found[0];
  }

  EXPECT_EQ(Count(400, "rejected"), 3);
  EXPECT_EQ(Count(401, "rejected"), 2);
  EXPECT_EQ(Count(404, "rejected"), 1);
  EXPECT_EQ(Count(200, "ok"), 2);

  const json stats = Stats();
  EXPECT_EQ(stats["since_start"]["requests"], 8);
  EXPECT_EQ(stats["since_start"]["outcomes"]["rejected"], 6);
  EXPECT_EQ(stats["since_start"]["outcomes"]["ok"], 2);
  const json& rows = stats["requests"];
  ASSERT_EQ(rows.size(), 8u) << stats.dump(1);
  // Newest first.
  EXPECT_EQ(rows[0]["path"], "/v1/messages/count_tokens");
  EXPECT_EQ(rows[1]["method"], "POST");
  EXPECT_EQ(rows[1]["status"], 200);
  EXPECT_EQ(rows[1]["outcome"], "ok");
  EXPECT_TRUE(rows[1]["ran"].get<bool>());
  EXPECT_GT(rows[1]["prompt_tokens"].get<int>(), 0);
  EXPECT_EQ(rows[4]["path"], "/v1/chat/completions");
  EXPECT_EQ(rows[4]["status"], 401);
  EXPECT_EQ(rows[4]["outcome"], "rejected");
  EXPECT_EQ(rows[4]["reason"], "invalid or missing API key");
  EXPECT_FALSE(rows[4]["ran"].get<bool>());
  EXPECT_NE(rows[7]["reason"].get<std::string>().find("not valid JSON"), std::string::npos);
}

// The JSON parser's message quotes what it last read, which can be a whole prompt: the log and
// the dashboard keep a bounded start of a reason (the client's error body keeps all of it).
TEST_F(RequestOutcomesTest, LongReasonsAreShortened) {
  Start("ok");
  const std::string body = "{\"messages\": \"" + std::string(20000, 'x');
  auto res = client_->Post("/v1/chat/completions", body, "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_GT(res->body.size(), 20000u);
  const std::vector<std::string> lines = RequestLines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_LT(lines[0].size(), 400u) << lines[0];
  EXPECT_EQ(lines[0].substr(lines[0].size() - 3), "...") << lines[0];
  const std::string reason = Stats()["requests"][0]["reason"];
  EXPECT_LT(reason.size(), 300u);
  EXPECT_NE(reason.find("not valid JSON"), std::string::npos) << reason;
}

// A streaming client that goes away mid-reply: its one line says "cancelled".
TEST_F(RequestOutcomesTest, ACancelledStreamSaysSo) {
  Start("ok");
  json stream = kChat;
  stream["stream"] = true;
  stream["ignore_eos"] = true;
  stream["max_tokens"] = 100000;
  const std::string body = stream.dump();
  const int fd = Connect();
  Send(fd, "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Length: " +
               std::to_string(body.size()) + "\r\n\r\n" + body);
  EXPECT_NE(Receive(fd, 5000, "data: ").find("data: "), std::string::npos);
  close(fd);
  WaitForRequestLines(1);

  const std::vector<std::string> lines = RequestLines();
  ASSERT_EQ(lines.size(), 1u) << ::testing::PrintToString(lines);
  EXPECT_EQ(lines[0].rfind("POST /v1/chat/completions 200 cancelled from 127.0.0.1 uid=", 0), 0u)
      << lines[0];
  EXPECT_NE(lines[0].find("the client went away"), std::string::npos) << lines[0];
  EXPECT_EQ(Count(200, "cancelled"), 1);
  const json stats = Stats();
  EXPECT_EQ(stats["since_start"]["requests"], 1);
  EXPECT_EQ(stats["requests"][0]["outcome"], "cancelled");
}

// Refusals the reception makes before any handler runs: bad framing, a body over the limit,
// requests that do not arrive in time, a foreign Host, and a full queue.
TEST_F(RequestOutcomesTest, RefusalsBeforeAHandlerAreLoggedCountedAndShown) {
  server::ServerOptions options;
  options.max_body_bytes = 1000;
  options.reception.head_timeout = std::chrono::milliseconds(300);
  options.reception.body_timeout = std::chrono::milliseconds(300);
  options.http_threads = 1;
  options.max_waiting = 1;
  options.write_timeout = std::chrono::milliseconds(1000);
  Start("ok", options);
  const std::string post = "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\n";
  EXPECT_EQ(RawStatus(post + "Content-Length: 2000\r\n\r\n"), 413);
  EXPECT_EQ(RawStatus(post + "Content-Length: -5\r\n\r\n"), 400);
  EXPECT_EQ(RawStatus(post + "Content-Length: 10\r\n\r\n{"), 408);
  EXPECT_EQ(RawStatus("GET /health HTTP/1.1\r\nHost: x"), 408);
  EXPECT_EQ(RawStatus("GET /v1/models HTTP/1.1\r\nHost: attacker.example\r\n\r\n"), 403);
  // The one API thread held by a reply nobody reads, one request waiting for it: the next is
  // refused.
  const auto [held, request] = FillTheApiThreadAndQueue();
  EXPECT_EQ(RawStatus(request, 1000), 503);
  for (int fd : held) close(fd);
  WaitForRequestLines(8);

  const std::vector<std::string> lines = RequestLines();
  EXPECT_EQ(lines.size(), 8u) << ::testing::PrintToString(lines);
  const std::pair<std::string, std::string> expected[] = {
      {"POST /v1/chat/completions 413 rejected from 127.0.0.1: ", "larger than"},
      {"POST /v1/chat/completions 400 rejected from 127.0.0.1: ", "Content-Length"},
      {"POST /v1/chat/completions 408 rejected from 127.0.0.1: ", "body"},
      // No request line arrived whole.
      {"- - 408 rejected from 127.0.0.1: ", "line and headers"},
      {"GET /v1/models 403 rejected from 127.0.0.1: ", "--allow-host"},
      {"POST /v1/chat/completions 503 busy from 127.0.0.1: ", "--max-queue"},
  };
  for (const auto& [prefix, reason] : expected) {
    const std::vector<std::string> found = LinesStartingWith(prefix);
    ASSERT_EQ(found.size(), 1u) << prefix << "\n" << ::testing::PrintToString(lines);
    EXPECT_NE(found[0].find(reason), std::string::npos) << found[0];
  }
  // The hog and the one that waited, both gone before their replies ended.
  EXPECT_EQ(LinesStartingWith("POST /v1/chat/completions 200 cancelled").size(), 2u)
      << ::testing::PrintToString(lines);

  EXPECT_EQ(Count(413, "rejected"), 1);
  EXPECT_EQ(Count(400, "rejected"), 1);
  EXPECT_EQ(Count(408, "rejected"), 2);
  EXPECT_EQ(Count(403, "rejected"), 1);
  EXPECT_EQ(Count(503, "busy"), 1);
  const json stats = Stats();
  EXPECT_EQ(stats["since_start"]["requests"], 8);
  EXPECT_EQ(stats["since_start"]["outcomes"]["busy"], 1);
  bool shown = false;
  for (const json& row : stats["requests"]) {
    shown = shown || (row["status"] == 403 && row["path"] == "/v1/models" &&
                      row["reason"].get<std::string>().find("--allow-host") != std::string::npos);
  }
  EXPECT_TRUE(shown) << stats["requests"].dump(1);
}

}  // namespace
}  // namespace ds::apps
