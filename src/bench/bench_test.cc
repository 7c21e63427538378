// The benchmark client's pieces: URL parsing, SSE framing at any chunk boundary, reading token
// counts from each server's stream shape, honest rates, and reports; and the client against an
// in-process HTTP server that streams canned responses, including the failure paths.
#include <gtest/gtest.h>
#include <httplib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "bench/calibration.h"
#include "bench/extra_body.h"
#include "bench/failures.h"
#include "bench/http_client.h"
#include "bench/progress.h"
#include "bench/prompt_text.h"
#include "bench/quote.h"
#include "bench/report.h"
#include "bench/rows.h"
#include "bench/server_url.h"
#include "bench/sse_parser.h"
#include "bench/stats.h"
#include "bench/stream_observer.h"
#include "bench/target.h"

namespace ds::bench {
namespace {

TEST(ServerUrlTest, ParsesHostPortAndPrefixAndDropsV1) {
  StatusOr<ServerUrl> url = ParseServerUrl("http://127.0.0.1:9000/v1/");
  ASSERT_TRUE(url.ok()) << url.status().ToString();
  EXPECT_EQ(url->host, "127.0.0.1");
  EXPECT_EQ(url->port, 9000);
  EXPECT_EQ(url->prefix, "");
  url = ParseServerUrl("http://gpu-box/llm");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->port, 80);
  EXPECT_EQ(url->prefix, "/llm");
  url = ParseServerUrl("http://[::1]:8080");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->host, "::1");
  EXPECT_EQ(url->port, 8080);
  EXPECT_EQ(url->origin(), "http://[::1]:8080");
  url = ParseServerUrl("https://api.example.com/v1");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->port, 443);
  EXPECT_EQ(url->origin(), "https://api.example.com:443");
}

TEST(ServerUrlTest, RejectsWhatItCannotReach) {
  for (const char* bad : {"ftp://a", "a:80", "http://:80", "http://a:0",
                          "http://a:99999", "http://a:x"}) {
    EXPECT_FALSE(ParseServerUrl(bad).ok()) << bad;
  }
}

TEST(SseParserTest, EventsSurviveAnyChunkBoundary) {
  const std::string stream =
      ": keep-alive\n\nevent: message_start\ndata: {\"a\":1}\n\ndata: x\r\ndata: y\r\n\r\n"
      "data: [DONE]\n\n";
  for (size_t chunk = 1; chunk <= stream.size(); ++chunk) {
    SseParser parser;
    std::vector<SseEvent> events;
    for (size_t i = 0; i < stream.size(); i += chunk) {
      for (SseEvent& e : parser.Feed(std::string_view(stream).substr(i, chunk))) {
        events.push_back(std::move(e));
      }
    }
    ASSERT_EQ(events.size(), 3u) << "chunk " << chunk;
    EXPECT_EQ(events[0].event, "message_start");
    EXPECT_EQ(events[0].data, "{\"a\":1}");
    EXPECT_EQ(events[1].event, "");
    EXPECT_EQ(events[1].data, "x\ny");
    EXPECT_EQ(events[2].data, "[DONE]");
  }
}

Measurement Observe(const std::vector<std::pair<std::string, double>>& payloads,
                    double wall_s = 10) {
  StreamObserver observer;
  for (const auto& [data, t] : payloads) observer.OnEvent({"", data}, t);
  EXPECT_TRUE(observer.status().ok()) << observer.status().ToString();
  return observer.Finish(wall_s);
}

TEST(StreamObserverTest, ReadsDeltaserveChatStream) {
  Measurement m = Observe({
      {R"({"choices":[{"delta":{"role":"assistant"}}]})", 0.5},
      {R"({"choices":[{"delta":{"reasoning_content":"hm"}}]})", 1.0},
      {R"({"choices":[{"delta":{"content":"a"}}]})", 1.5},
      {R"({"choices":[{"delta":{"content":"b"}}]})", 2.0},
      {R"({"choices":[],"usage":{"prompt_tokens":1000,"completion_tokens":3,
          "prompt_tokens_details":{"cached_tokens":600}}})", 2.1},
      {R"({"choices":[],"timings":{"cached_tokens":600,"prompt_tokens_computed":400}})", 2.1},
      {"[DONE]", 2.1}});
  EXPECT_EQ(m.prompt_tokens, 1000);
  EXPECT_EQ(m.cached_tokens, 600);
  EXPECT_EQ(m.computed_tokens(), 400);
  EXPECT_EQ(m.completion_tokens, 3);
  EXPECT_EQ(m.token_events, 3);
  EXPECT_DOUBLE_EQ(m.ttft_s(), 1.0);  // reasoning text counts as generated
  EXPECT_DOUBLE_EQ(m.prefill_tokens_per_s(), 400.0);
  EXPECT_DOUBLE_EQ(m.decode_tokens_per_s(), 2.0);  // 2 tokens after the first in 1 s
  EXPECT_DOUBLE_EQ(m.total_tokens_per_wall_s(), 100.3);
}

TEST(StreamObserverTest, ReadsLlamaServerTimingsWhenUsageHasNoCachedCount) {
  Measurement m = Observe({{R"({"choices":[{"text":"x"}]})", 2.0},
                           {R"({"choices":[{"text":"y"}]})", 3.0},
                           {R"({"choices":[],"timings":{"cache_n":256,"prompt_n":768,
                               "predicted_n":2}})", 3.0}});
  EXPECT_EQ(m.prompt_tokens, 1024);
  EXPECT_EQ(m.cached_tokens, 256);
  EXPECT_EQ(m.completion_tokens, 2);
  EXPECT_DOUBLE_EQ(m.prefill_tokens_per_s(), 384.0);
}

TEST(StreamObserverTest, ReadsAnthropicUsageIncludingCacheReads) {
  Measurement m = Observe(
      {{R"({"type":"message_start","message":{"usage":{"input_tokens":40,
           "cache_read_input_tokens":960,"output_tokens":0}}})", 0.1},
       {R"({"type":"content_block_delta","delta":{"type":"thinking_delta","thinking":"t"}})", 0.4},
       {R"({"type":"content_block_delta","delta":{"type":"input_json_delta",
           "partial_json":"{"}})", 0.6},
       {R"({"type":"message_delta","usage":{"output_tokens":5}})", 0.7}});
  EXPECT_EQ(m.prompt_tokens, 1000);
  EXPECT_EQ(m.cached_tokens, 960);
  EXPECT_EQ(m.completion_tokens, 5);
  EXPECT_DOUBLE_EQ(m.ttft_s(), 0.4);
}

TEST(StreamObserverTest, UnreportedCacheCountsEveryPromptTokenAsComputed) {
  Measurement m = Observe({{R"({"choices":[{"delta":{"content":"x"}}]})", 0.5},
                           {R"({"choices":[],"usage":{"prompt_tokens":50,
                               "completion_tokens":1}})", 0.5}});
  EXPECT_FALSE(m.cached_reported());
  EXPECT_EQ(m.computed_tokens(), 50);
  EXPECT_LT(m.decode_tokens_per_s(), 0);  // one token: no decode rate
}

TEST(StreamObserverTest, StreamedErrorsAndGarbageAreErrors) {
  StreamObserver error_event;
  error_event.OnEvent({"error", R"({"type":"error","error":{"message":"boom"}})"}, 1);
  EXPECT_FALSE(error_event.status().ok());
  StreamObserver garbage;
  garbage.OnEvent({"", "not json"}, 1);
  EXPECT_FALSE(garbage.status().ok());
}

// Regression: a warm request that computed one prompt token showed a "prefill tok/s" of
// 1 / TTFT next to the cold rates.
TEST(MeasurementTest, NoPrefillRateUnderTheMinimumComputedTokens) {
  Measurement m;
  m.prompt_tokens = 1000;
  m.cached_tokens = 1000 - (kMinPrefillTokens - 1);
  m.first_token_s = 0.5;
  EXPECT_LT(m.prefill_tokens_per_s(), 0);
  EXPECT_NE(Summarize(m).find("prefill not rated (63 computed, under 64)"), std::string::npos)
      << Summarize(m);
  Json row = {{"error", ""}};
  AddMeasurement(m, &row);
  EXPECT_TRUE(row["prefill_tok_s"].is_null());
  EXPECT_EQ(row["computed_tokens"], 63);
  m.cached_tokens = 1000 - kMinPrefillTokens;
  EXPECT_DOUBLE_EQ(m.prefill_tokens_per_s(), 128.0);
}

TEST(ReportTest, UnratedPrefillGetsAFootnote) {
  Report r;
  r.rows = {{{"computed_tokens", 1}, {"prefill_tok_s", Json()}, {"error", ""}},
            {{"computed_tokens", 1}, {"prefill_tok_s", Json()}, {"error", "failed"}},
            {{"computed_tokens", 900}, {"prefill_tok_s", 9.0}, {"error", ""}}};
  NoteUnratedPrefill(&r);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_EQ(r.notes[0], "prefill_tok_s is blank in 1 row that computed fewer than 64 prompt "
                        "tokens: their TTFT is the request's overhead, not prefill");
  r.rows.erase(r.rows.begin());
  r.notes.clear();
  NoteUnratedPrefill(&r);
  EXPECT_TRUE(r.notes.empty());
}

TEST(ProgressTest, ElapsedText) {
  EXPECT_EQ(ElapsedText(0.4), "0 s");
  EXPECT_EQ(ElapsedText(59.9), "59 s");
  EXPECT_EQ(ElapsedText(125), "2 min 05 s");
}

// What a Progress wrote, read safely while its clock thread writes.
class Written {
 public:
  ProgressOptions Options(bool terminal, double interval_s) {
    ProgressOptions options;
    options.terminal = terminal;
    options.redraw_s = options.log_every_s = interval_s;
    options.write = [this](const std::string& text) {
      std::lock_guard lock(mu_);
      pieces_.push_back(text);
    };
    return options;
  }
  // Waits up to 10 s for a piece containing `text`.
  bool WaitFor(const std::string& text) {
    for (int i = 0; i < 1000; ++i) {
      if (Count(text) > 0) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  size_t Count(const std::string& text) {
    std::lock_guard lock(mu_);
    return std::count_if(pieces_.begin(), pieces_.end(),
                         [&](const std::string& p) { return p.find(text) != std::string::npos; });
  }

 private:
  std::mutex mu_;
  std::vector<std::string> pieces_;
};

// Regression: nothing moved on the screen while a long request ran.
TEST(ProgressTest, ATerminalRedrawsTheRunningStepWithItsElapsedTime) {
  Written written;
  Progress progress("sweep", 2, written.Options(/*terminal=*/true, 0.25));
  progress.Begin("4096 tokens on ds");
  EXPECT_GE(written.Count("\r\033[K[1/2] sweep: 4096 tokens on ds ... 0 s"), 1u);
  ASSERT_TRUE(written.WaitFor("\r\033[K[1/2] sweep: 4096 tokens on ds ... 1 s"));
  progress.End("4096 tokens on ds", "done");
  size_t redraws = written.Count(" ... ");
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  EXPECT_EQ(written.Count(" ... "), redraws) << "an ended step's clock stops";
  EXPECT_EQ(written.Count("[1/2] sweep: 4096 tokens on ds: done\n"), 1u);
}

TEST(ProgressTest, ALogSaysALongStepStillRuns) {
  Written written;
  Progress progress("sweep", 1, written.Options(/*terminal=*/false, 0.05));
  progress.Begin("65536 tokens on ds");
  ASSERT_TRUE(written.WaitFor("[1/1] sweep: 65536 tokens on ds: still running after 0 s\n"));
  progress.End("65536 tokens on ds", "done");
  EXPECT_EQ(written.Count("\r"), 0u);
}

TEST(StatsTest, PercentileAndMean) {
  EXPECT_DOUBLE_EQ(Percentile({3, 1, 2, 4}, 50), 2.5);
  EXPECT_DOUBLE_EQ(Percentile({3, 1, 2, 4}, 100), 4);
  EXPECT_DOUBLE_EQ(Percentile({7}, 95), 7);
  EXPECT_EQ(Percentile({}, 50), -1);
  EXPECT_DOUBLE_EQ(Mean({1, 2, 6}), 3);
}

TEST(TokenScaleTest, WordsForInvertsTheLine) {
  TokenScale scale{12, 1.5};
  EXPECT_EQ(scale.WordsFor(1512), 1000);
  EXPECT_EQ(scale.WordsFor(1), 1);
}

TEST(PromptTextTest, EveryPromptIsUniqueFromItsFirstWord) {
  PromptText text;
  std::string a = text.Make(20), b = text.Make(20);
  EXPECT_NE(a.substr(0, 40), b.substr(0, 40));
  EXPECT_EQ(std::count(a.begin(), a.end(), ' '), 21);  // "Request <nonce>:" then 20 words
}

Report SampleReport() {
  Report r;
  r.mode = "sweep";
  r.columns = {"server", "size", "ttft_s", "error"};
  r.key_columns = {"size"};
  r.ratio_columns = {"ttft_s"};
  r.rows = {{{"server", "A"}, {"size", 1024}, {"ttft_s", 2.0}, {"error", ""}},
            {{"server", "B"}, {"size", 1024}, {"ttft_s", 4.0}, {"error", ""}},
            {{"server", "A"}, {"size", 2048}, {"ttft_s", Json()}, {"error", "HTTP 400: \"too, long\""}}};
  return r;
}

TEST(ReportTest, CsvQuotesAndLeavesUnknownEmpty) {
  EXPECT_EQ(CsvText(SampleReport()),
            "server,size,ttft_s,error\nA,1024,2.0,\nB,1024,4.0,\n"
            "A,2048,,\"HTTP 400: \"\"too, long\"\"\"\n");
}

TEST(ReportTest, RatiosPairRowsByWorkloadItem) {
  std::string table = RatioTable(SampleReport(), "A", "B");
  EXPECT_NE(table.find("| 1024 | 0.5 |"), std::string::npos) << table;
  EXPECT_EQ(table.find("2048"), std::string::npos) << table;  // B never ran it
}

TEST(ReportTest, UnknownRatesAreNullNotZero) {
  Measurement m;
  m.prompt_tokens = 10;
  Json row;
  AddMeasurement(m, &row);
  EXPECT_TRUE(row["ttft_s"].is_null());
  EXPECT_TRUE(row["decode_tok_s"].is_null());
  EXPECT_TRUE(row["cached_tokens"].is_null());
}

TEST(FailuresTest, TheSummaryAndTheLastLineNameTheFirstFailureAndItsPhase) {
  Report r = SampleReport();
  r.rows[2]["failed_in"] = "calibration";
  SummarizeFailures(&r);
  EXPECT_EQ(r.summary["failed_rows"], 1);
  EXPECT_EQ(r.summary["first_failure"]["row"], 3);
  EXPECT_EQ(r.summary["first_failure"]["failed_in"], "calibration");
  EXPECT_EQ(FailureLine(r),
            "1 of 3 rows failed; the first, row 3 of sweep (server A, size 2048), failed in "
            "calibration: HTTP 400: \"too, long\"");
  r.rows.pop_back();
  r.notes.clear();
  SummarizeFailures(&r);
  EXPECT_EQ(r.summary["failed_rows"], 0);
  EXPECT_TRUE(r.summary["first_failure"].is_null());
  EXPECT_EQ(FailureLine(r), "");
}

// Regression: when every row failed, the charts came out empty with nothing to say why.
TEST(FailuresTest, WhenNoRowSucceededTheReportAndEveryChartSaySo) {
  Report r = SampleReport();
  r.charts = {Chart{"c", "t", "x", false, {Panel{"y", {}}}}};
  SummarizeFailures(&r);
  EXPECT_EQ(r.charts[0].note, "1 of 3 rows failed and are not drawn; the first: HTTP 400: "
                              "\"too, long\"");
  EXPECT_TRUE(r.notes.empty());
  r.rows.erase(r.rows.begin(), r.rows.begin() + 2);
  SummarizeFailures(&r);
  const std::string note = "no row succeeded: HTTP 400: \"too, long\"";
  EXPECT_EQ(r.charts[0].note, note);
  EXPECT_EQ(r.notes, std::vector<std::string>{note});
  EXPECT_NE(MarkdownTable(r).find("\nNote: " + note + "\n"), std::string::npos);
}

TEST(QuoteTest, CutsOnACharacterBoundary) {
  EXPECT_EQ(Quote("abc", 5), "abc");
  EXPECT_EQ(Quote("abcdef", 3), "abc");
  EXPECT_EQ(Quote("a\xc3\xa9\xc3\xa9", 4), "a\xc3\xa9");  // not inside the second é
  EXPECT_EQ(Quote("a\xe2\x80\xa6" "b", 3), "a");  // nor inside a 3-byte character
  EXPECT_EQ(Quote("\xf0\x9f\x98\x80", 2), "");
}

// Regression: an error quoting invalid UTF-8 (a server body cut mid-character, or the server's
// own bytes) made the JSON report throw, and the command abort without writing anything.
TEST(ReportTest, InvalidUtf8InAnErrorDoesNotStopTheReport) {
  Report r = SampleReport();
  r.rows[2]["error"] = "HTTP 400: caf\xc3";
  std::string dir = ::testing::TempDir() + "bench_utf8_" + std::to_string(getpid());
  StatusOr<std::vector<std::string>> written = WriteReport(r, dir);
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  std::ifstream in(dir + "/sweep.json");
  Json doc = Json::parse(in);
  EXPECT_EQ(doc["rows"][2]["error"], "HTTP 400: caf\xef\xbf\xbd");  // U+FFFD
  std::filesystem::remove_all(dir);
}

TEST(ReportTest, WriteFailsClearlyOnAFileInTheWay) {
  std::string blocker = ::testing::TempDir() + "bench_blocker_" + std::to_string(getpid());
  FILE* f = std::fopen(blocker.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  StatusOr<std::vector<std::string>> written = WriteReport(SampleReport(), blocker + "/out");
  EXPECT_FALSE(written.ok());
  std::remove(blocker.c_str());
}

// A server that streams what a test tells it to.
class FakeServer {
 public:
  explicit FakeServer(std::function<void(const httplib::Request&, httplib::Response&)> handler) {
    server_.Post(".*", handler);
    server_.Get("/v1/models", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"data":[{"id":"fake-model"}]})", "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::yield();
  }
  ~FakeServer() {
    server_.stop();
    thread_.join();
  }
  Target target() const {
    Target t;
    t.url = *ParseServerUrl("http://127.0.0.1:" + std::to_string(port_));
    t.label = "fake";
    t.model = "fake-model";
    t.timeout_s = 10;
    return t;
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

TEST(ClientTest, MeasuresAStreamAndSendsTheBenchmarkRequest) {
  Json seen;
  FakeServer server([&](const httplib::Request& req, httplib::Response& res) {
    seen = Json::parse(req.body);
    seen["authorization"] = req.get_header_value("Authorization");
    res.set_content(
        "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n"
        "data: {\"choices\":[{\"delta\":{\"content\":\"b\"}}]}\n\n"
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":2,"
        "\"prompt_tokens_details\":{\"cached_tokens\":0}}}\n\ndata: [DONE]\n\n",
        "text/event-stream");
  });
  Target target = server.target();
  target.api_key = "secret";
  RequestResult m = MeasurePrompt(target, "hello", 7);
  ASSERT_TRUE(m.ok()) << m.status.ToString();
  EXPECT_EQ(m.measurement.prompt_tokens, 9);
  EXPECT_EQ(m.measurement.decode_tokens(), 2);
  EXPECT_EQ(seen["max_tokens"], 7);
  EXPECT_EQ(seen["ignore_eos"], true);
  EXPECT_EQ(seen["stream"], true);
  EXPECT_EQ(seen["stream_options"]["include_usage"], true);
  EXPECT_EQ(seen["messages"][0]["content"], "hello");
  EXPECT_EQ(seen["authorization"], "Bearer secret");
  StatusOr<std::string> model = DiscoverModel(server.target());
  ASSERT_TRUE(model.ok());
  EXPECT_EQ(*model, "fake-model");
}

TEST(ExtraBodyTest, MergesDeeplyAndNullRemoves) {
  StatusOr<Json> extra = ParseExtraBody(
      R"({"logit_bias":{"42":-100},"stream_options":{"x":1},"ignore_eos":null})", "--extra-body");
  ASSERT_TRUE(extra.ok()) << extra.status().ToString();
  Json body = {{"model", "m"}, {"stream", true}, {"stream_options", {{"include_usage", true}}},
               {"ignore_eos", true}};
  Json merged = WithExtraBody(body, *extra);
  EXPECT_EQ(merged, Json::parse(R"({"model":"m","stream":true,
      "stream_options":{"include_usage":true,"x":1},"logit_bias":{"42":-100}})"));
  EXPECT_EQ(WithExtraBody(body, Json()), body);
}

TEST(ExtraBodyTest, AnythingButAnObjectIsAClearError) {
  StatusOr<Json> bad = ParseExtraBody("{\"logit_bias\": ", "--extra-body");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().rfind("--extra-body: not valid JSON: ", 0), 0u)
      << bad.status().message();
  StatusOr<Json> array = ParseExtraBody("[1]", "--extra-body-file x.json");
  ASSERT_FALSE(array.ok());
  EXPECT_NE(array.status().message().find("--extra-body-file x.json: must be a JSON object"),
            std::string::npos)
      << array.status().message();
  EXPECT_NE(array.status().message().find("not array"), std::string::npos);
  StatusOr<Json> stream = ParseExtraBody(R"({"stream":false})", "--extra-body");
  ASSERT_FALSE(stream.ok());
  EXPECT_NE(stream.status().message().find("cannot set \"stream\""), std::string::npos);
  EXPECT_FALSE(ParseExtraBody(std::string(200, '[') + std::string(200, ']'), "x").ok());
}

TEST(ClientTest, TheExtraBodyGoesIntoTheRequest) {
  Json seen;
  FakeServer server([&](const httplib::Request& req, httplib::Response& res) {
    seen = Json::parse(req.body);
    res.set_content("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":9}}\n\n",
                    "text/event-stream");
  });
  Target target = server.target();
  target.extra_body = Json::parse(R"({"logit_bias":{"42":-100},"max_tokens":3})");
  ASSERT_TRUE(MeasurePrompt(target, "hello", 7).ok());
  EXPECT_EQ(seen["logit_bias"]["42"], -100);
  EXPECT_EQ(seen["max_tokens"], 3);
  EXPECT_EQ(seen["messages"][0]["content"], "hello");
}

TEST(ClientTest, HttpErrorsQuoteTheServer) {
  FakeServer server([](const httplib::Request&, httplib::Response& res) {
    res.status = 400;
    res.set_content(R"({"error":{"message":"prompt is longer than the context"}})",
                    "application/json");
  });
  RequestResult m = MeasurePrompt(server.target(), "hello", 1);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status.message().find("HTTP 400"), std::string::npos);
  EXPECT_NE(m.status.message().find("longer than the context"), std::string::npos);
}

TEST(ClientTest, ALongErrorIsQuotedAsWholeCharacters) {
  FakeServer server([](const httplib::Request&, httplib::Response& res) {
    res.status = 400;
    std::string message = "xy";
    for (int i = 0; i < 400; ++i) message += "\xc3\xa9";
    res.set_content(R"({"error":{"message":")" + message + "\"}}", "application/json");
  });
  RequestResult m = MeasurePrompt(server.target(), "hello", 1);
  ASSERT_FALSE(m.ok());
  const std::string& text = m.status.message();
  EXPECT_EQ(text.substr(text.size() - 2), "\xc3\xa9");
  EXPECT_NO_THROW(Json(text).dump());
}

TEST(ClientTest, AStreamWithoutUsageIsAnError) {
  FakeServer server([](const httplib::Request&, httplib::Response& res) {
    res.set_content("data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n",
                    "text/event-stream");
  });
  RequestResult m = MeasurePrompt(server.target(), "hello", 1);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status.message().find("no prompt token count"), std::string::npos);
}

TEST(ClientTest, NoServerIsAClearError) {
  Target target;
  {
    FakeServer server([](const httplib::Request&, httplib::Response&) {});
    target = server.target();
  }
  RequestResult m = MeasurePrompt(target, "hello", 1);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status.message().find("failed"), std::string::npos) << m.status.message();
}

// Regression: a request that failed mid-stream reported nothing but its error, although the
// server had streamed text for a while.
TEST(ClientTest, AStreamCutShortKeepsWhatItMeasured) {
  FakeServer server([](const httplib::Request&, httplib::Response& res) {
    res.set_chunked_content_provider("text/event-stream", [](size_t, httplib::DataSink& sink) {
      for (const char* text : {"a", "b", "c"}) {
        std::string event =
            std::string("data: {\"choices\":[{\"delta\":{\"content\":\"") + text + "\"}}]}\n\n";
        sink.write(event.data(), event.size());
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      return false;  // drops the connection before the usage and the last chunk
    });
  });
  RequestResult result = MeasurePrompt(server.target(), "hello", 8);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status.message().find("the connection broke during the response"),
            std::string::npos)
      << result.status.message();
  const Measurement& m = result.measurement;
  EXPECT_GT(m.ttft_s(), 0);
  EXPECT_EQ(m.decode_tokens(), 3);
  EXPECT_GT(m.decode_seconds(), 0.02);
  EXPECT_GE(m.wall_s, m.last_token_s);
  Json row;
  AddResult(result, &row);
  EXPECT_EQ(row["error"], result.status.message());
  EXPECT_DOUBLE_EQ(row["ttft_s"].get<double>(), m.ttft_s());
  EXPECT_EQ(row["decode_tokens"], 3);
  EXPECT_DOUBLE_EQ(row["wall_s"].get<double>(), m.wall_s);
  EXPECT_TRUE(row["prompt_tokens"].is_null());  // never reported, so unknown, not zero
  EXPECT_TRUE(row["prefill_tok_s"].is_null());
  EXPECT_NE(Outcome(result).find("FAILED after"), std::string::npos) << Outcome(result);
  EXPECT_NE(Outcome(result).find("3 tokens streamed"), std::string::npos) << Outcome(result);
}

// Regression: a failed calibration probe ended the whole command with the server's message only.
TEST(CalibrationTest, AFailedProbeStopsCalibrationAndKeepsWhatWasMeasured) {
  int requests = 0;
  FakeServer server([&](const httplib::Request& req, httplib::Response& res) {
    if (++requests == 2) {
      res.status = 500;
      res.set_content(R"({"error":{"message":"out of slots"}})", "application/json");
      return;
    }
    int64_t words = std::count(req.body.begin(), req.body.end(), ' ');
    res.set_content("data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n"
                    "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":" +
                        std::to_string(words) + ",\"completion_tokens\":1}}\n\n",
                    "text/event-stream");
  });
  PromptText text;
  Calibration c = Calibrate(server.target(), &text);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status.message().find("HTTP 500"), std::string::npos) << c.status.message();
  ASSERT_EQ(c.probes.size(), 2u);
  EXPECT_TRUE(c.probes[0].ok());
  Json summary = CalibrationSummary({{"fake", c}})["fake"];
  EXPECT_TRUE(summary["prompt_tokens_per_word"].is_null());
  EXPECT_EQ(summary["error"], c.status.message());
  EXPECT_EQ(summary["probes"][0]["words"], 64);
  EXPECT_GT(summary["probes"][0]["prompt_tokens"].get<int64_t>(), 64);
  EXPECT_EQ(summary["probes"][1]["failed_in"], "request");
  Json row;
  AddUncalibrated(c, &row);
  EXPECT_EQ(row["failed_in"], "calibration");
  EXPECT_EQ(row["error"], "calibration failed: " + c.status.message());
  EXPECT_TRUE(row["wall_s"].is_null());  // never sent
}

TEST(ReportTest, FailedRowsAreNotDrawn) {
  std::vector<Json> rows = {{{"server", "A"}, {"x", 1}, {"y", 2.0}, {"error", ""}},
                            {{"server", "A"}, {"x", 2}, {"y", 3.0}, {"error", "cut short"}}};
  Series series = ColumnSeries(rows, "A", "x", "y", "s");
  ASSERT_EQ(series.points.size(), 1u);
  EXPECT_EQ(series.points[0].first, 1);
}

}  // namespace
}  // namespace ds::bench
