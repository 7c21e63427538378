// An in-process server over a scripted model (see scripted_model.h) for HTTP-level tests.
#pragma once

#include <arpa/inet.h>
#include <httplib.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "apps/default_vocab.h"
#include "apps/scripted_model.h"
#include "engine/engine.h"
#include "server/chat_service.h"
#include "server/http_server.h"
#include "text/tokenizer.h"

namespace ds::apps {

using nlohmann::json;

class ServerFixture : public ::testing::Test {
 protected:
  // Serves a scripted model that answers `script_text` then end-of-turn. `chat_template`
  // replaces the built-in tokenizer's ChatML when given.
  void Start(const std::string& script_text, server::ServerOptions options = {},
             const std::string& chat_template = "", server::ChatServiceOptions chat = {}) {
    text::Vocab vocab = MakeDefaultVocab(300);
    if (!chat_template.empty()) vocab.chat_template = chat_template;
    auto tokenizer = text::Tokenizer::FromVocab(std::move(vocab));
    ASSERT_TRUE(tokenizer.ok());
    tokenizer_ = std::move(tokenizer).value();
    std::vector<int32_t> script = tokenizer_->Encode(script_text, false, true);
    script.push_back(tokenizer_->vocab().eos_id);
    model_ = std::make_unique<ScriptedModel>(tokenizer_->num_tokens(), script);
    // One prefill chunk per prompt, however long: the scripted model counts its script from the
    // end of its first chunk.
    engine_ = std::make_unique<engine::Engine>(
        model_.get(), engine::EngineOptions{.max_parallel = 2, .context_tokens = 1 << 18,
                                            .prefill_chunk_tokens = 1 << 18, .threads = 1,
                                            .cache = {}});
    auto service = server::ChatService::Create(engine_.get(), tokenizer_.get(), std::move(chat));
    ASSERT_TRUE(service.ok()) << service.status().ToString();
    service_ = std::move(service).value();
    options.port = 0;
    options.model_id = "scripted";
    http_ = std::make_unique<server::HttpServer>(options, service_.get());
    ASSERT_TRUE(http_->Start().ok());
    client_ = std::make_unique<httplib::Client>("127.0.0.1", http_->port());
    client_->set_read_timeout(30, 0);
  }

  void TearDown() override {
    if (http_) http_->Stop();
  }

  json Post(const std::string& path, const json& body, int expected_status = 200) {
    auto res = client_->Post(path, body.dump(), "application/json");
    EXPECT_TRUE(res) << path;
    if (!res) return json();
    EXPECT_EQ(res->status, expected_status) << res->body;
    return json::parse(res->body, nullptr, false);
  }

  // The data payloads of an SSE response, with their event names ("" when unnamed).
  std::vector<std::pair<std::string, json>> PostStream(const std::string& path, json body) {
    body["stream"] = true;
    auto res = client_->Post(path, body.dump(), "application/json");
    EXPECT_TRUE(res && res->status == 200) << (res ? res->body : "no response");
    std::vector<std::pair<std::string, json>> events;
    if (!res) return events;
    std::string event;
    std::istringstream lines(res->body);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("event: ", 0) == 0) event = line.substr(7);
      if (line.rfind("data: ", 0) != 0) continue;
      std::string data = line.substr(6);
      events.push_back({event, data == "[DONE]" ? json("[DONE]") : json::parse(data)});
      event.clear();
    }
    return events;
  }

  // Raw sockets, for requests a client library would not send (bad framing, slow or vanishing
  // clients).
  int Connect() {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(http_->port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    return fd;
  }

  static void Send(int fd, const std::string& bytes) {
    EXPECT_EQ(send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  }

  // What the server sends within `timeout_ms`, until it closes, or until `until` arrives.
  static std::string Receive(int fd, int timeout_ms, std::string_view until = {}) {
    using Clock = std::chrono::steady_clock;
    std::string out;
    char buf[4096];
    const auto end = Clock::now() + std::chrono::milliseconds(timeout_ms);
    while (Clock::now() < end) {
      pollfd p{fd, POLLIN, 0};
      const int left = static_cast<int>(
          std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()).count());
      if (poll(&p, 1, std::max(left, 1)) <= 0) break;
      const ssize_t n = recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) break;
      out.append(buf, static_cast<size_t>(n));
      if (!until.empty() && out.find(until) != std::string::npos) break;
    }
    return out;
  }

  // The status of a raw request sent on a fresh connection.
  int RawStatus(const std::string& request, int timeout_ms = 3000) {
    const int fd = Connect();
    Send(fd, request);
    const std::string reply = Receive(fd, timeout_ms, "\r\n");
    close(fd);
    if (reply.rfind("HTTP/1.1 ", 0) != 0) return 0;
    return std::stoi(reply.substr(9, 3));
  }

  // With one API thread and one waiting place: holds the thread with a streamed reply nobody
  // reads and fills the place, so that the next API request is refused. Returns the
  // connections to close and that request.
  std::pair<std::vector<int>, std::string> FillTheApiThreadAndQueue() {
    json stream = {{"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"stream", true},
                   {"ignore_eos", true}, {"max_tokens", 200000}};
    const std::string body = stream.dump();
    const std::string request = "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\n"
                                "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" +
                                body;
    const int hog = Connect();
    Send(hog, request);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const int waiting = Connect();
    Send(waiting, request);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return {{hog, waiting}, request};
  }

  std::unique_ptr<text::Tokenizer> tokenizer_;
  std::unique_ptr<ScriptedModel> model_;
  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<server::ChatService> service_;
  std::unique_ptr<server::HttpServer> http_;
  std::unique_ptr<httplib::Client> client_;
};

}  // namespace ds::apps
