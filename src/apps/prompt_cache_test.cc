// The server's side of the prefix cache, with the default model's tokenizer: generated-id
// continuity, message boundaries in rendered ChatML, and the miss diagnostics and log line.
#include <gtest/gtest.h>

#include "apps/default_vocab.h"
#include "apps/test_captures.h"
#include "server/continuity_memo.h"
#include "server/prompt_builder.h"
#include "server/prompt_layout.h"
#include "server/request_ledger.h"
#include "server/server_metrics.h"
#include "text/unicode.h"

namespace ds::apps {
namespace {

using server::ContinuityMemo;
using server::PromptMessage;

class PromptCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto tokenizer = text::Tokenizer::FromVocab(MakeDefaultVocab(300));
    ASSERT_TRUE(tokenizer.ok());
    tokenizer_ = std::move(tokenizer).value();
  }
  std::vector<int32_t> Encode(const std::string& text, bool add_special = true) {
    return tokenizer_->Encode(text, add_special, /*parse_special=*/true);
  }
  // One id per byte: a reply the model spelled out in a way re-tokenising would not.
  std::vector<int32_t> ByteIds(const std::string& text) {
    std::vector<int32_t> ids;
    for (char c : text) {
      ids.push_back(tokenizer_->FindToken(text::ByteToByteLevel(static_cast<uint8_t>(c))));
      EXPECT_GE(ids.back(), 0);
    }
    return ids;
  }
  std::vector<int32_t> Concat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  }

  std::unique_ptr<text::Tokenizer> tokenizer_;
};

const std::string kPrompt =
    "<|im_start|>system\nYou write code.<|im_end|>\n<|im_start|>user\nHi there<|im_end|>\n"
    "<|im_start|>assistant\n";

TEST_F(PromptCacheTest, RepliesKeepTheirGeneratedIds) {
  ContinuityMemo memo(tokenizer_.get());
  const std::string reply = "the answer is there<|im_end|>";
  const std::string next = kPrompt + reply + "\n<|im_start|>user\nthanks<|im_end|>\n";
  int64_t reused = -1;
  EXPECT_EQ(memo.Encode(next, &reused), Encode(next));
  EXPECT_EQ(reused, 0);

  const std::vector<int32_t> prompt_ids = Encode(kPrompt);
  std::vector<int32_t> reply_ids = ByteIds("the answer is there");
  reply_ids.push_back(tokenizer_->FindToken("<|im_end|>"));
  ASSERT_NE(Concat(prompt_ids, reply_ids), std::vector<int32_t>(Encode(kPrompt + reply)))
      << "re-tokenising must merge what the model spelled byte by byte";
  memo.Record(kPrompt, prompt_ids, reply_ids);

  const std::vector<int32_t> ids = memo.Encode(next, &reused);
  EXPECT_EQ(reused, static_cast<int64_t>(prompt_ids.size() + reply_ids.size()));
  EXPECT_EQ(ids, Concat(Concat(prompt_ids, reply_ids),
                        Encode("\n<|im_start|>user\nthanks<|im_end|>\n", false)));
  EXPECT_EQ(tokenizer_->Decode(ids, true), next);
}

// Ids seeded from the disk tier after a restart are reused as far as the new text repeats
// their pieces, even where tokenising the text afresh would merge them otherwise.
TEST_F(PromptCacheTest, SeededIdsAreReusedAfterARestart) {
  auto tokenizer = text::Tokenizer::FromVocab(MakeDefaultVocab(300));
  ASSERT_TRUE(tokenizer.ok());
  const text::Tokenizer& t = **tokenizer;
  const std::string stored = "<|im_start|>user\nhello there<|im_end|>\n";
  // One id per byte outside the specials: not what Encode gives.
  std::vector<int32_t> seeded = t.Encode("<|im_start|>", false, true);
  for (char c : std::string("user\nhello there")) {
    const std::vector<int32_t> byte = t.Encode(std::string(1, c), false, true);
    seeded.insert(seeded.end(), byte.begin(), byte.end());
  }
  for (int32_t id : t.Encode("<|im_end|>\n", false, true)) seeded.push_back(id);
  ASSERT_NE(seeded, t.Encode(stored, true, true));
  server::ContinuityMemo memo(&t);
  memo.Seed(seeded);
  int64_t reused = 0;
  const std::vector<int32_t> ids = memo.Encode(stored + "<|im_start|>assistant\n", &reused);
  EXPECT_EQ(reused, static_cast<int64_t>(seeded.size()));
  EXPECT_TRUE(std::equal(seeded.begin(), seeded.end(), ids.begin()));
  // A text that leaves the stored one keeps the ids of the part it repeats.
  memo.Encode("<|im_start|>user\nhello world", &reused);
  EXPECT_EQ(reused, static_cast<int64_t>(t.Encode("<|im_start|>", false, true).size() +
                                         std::string("user\nhello ").size()));
}

TEST_F(PromptCacheTest, AReplyCutShortKeepsTheIdsOfWhatWasKept) {
  ContinuityMemo memo(tokenizer_.get());
  const std::vector<int32_t> prompt_ids = Encode(kPrompt);
  memo.Record(kPrompt, prompt_ids, ByteIds("partial answer that went on"));
  // The client kept what streamed before it went away (or what came before a stop string).
  const std::string next = kPrompt + "partial ans<|im_end|>\n<|im_start|>user\ngo on<|im_end|>\n";
  int64_t reused = 0;
  const std::vector<int32_t> ids = memo.Encode(next, &reused);
  EXPECT_EQ(reused, static_cast<int64_t>(prompt_ids.size() + std::string("partial ans").size()));
  EXPECT_EQ(tokenizer_->Decode(ids, true), next);

  // A prompt that differs inside the remembered prompt reuses nothing.
  const std::string edited = "<|im_start|>system\nYou write prose.<|im_end|>\n";
  EXPECT_EQ(memo.Encode(edited, &reused), Encode(edited));
  EXPECT_EQ(reused, 0);
}

TEST_F(PromptCacheTest, ContinuityNeverCutsACharacter) {
  ContinuityMemo memo(tokenizer_.get());
  const std::vector<int32_t> prompt_ids = Encode(kPrompt);
  memo.Record(kPrompt, prompt_ids, ByteIds("caf\xC3\xA9"));  // é, its two bytes as two ids
  const std::string next = kPrompt + "caf\xC3\xA8!";         // è shares the first byte
  int64_t reused = 0;
  const std::vector<int32_t> ids = memo.Encode(next, &reused);
  EXPECT_EQ(reused, static_cast<int64_t>(prompt_ids.size() + 3));
  EXPECT_EQ(tokenizer_->Decode(ids, true), next);
}

TEST_F(PromptCacheTest, OnlyTheNewestEntriesAreKept) {
  ContinuityMemo memo(tokenizer_.get(), /*max_entries=*/2);
  for (std::string name : {"a", "b", "c"}) {
    const std::string prompt = "<|im_start|>user\n" + name + "<|im_end|>\n<|im_start|>assistant\n";
    memo.Record(prompt, Encode(prompt), ByteIds("reply"));
  }
  int64_t reused = 0;
  memo.Encode("<|im_start|>user\na<|im_end|>\n<|im_start|>assistant\nreply", &reused);
  EXPECT_EQ(reused, 0) << "the oldest entry was dropped";
  memo.Encode("<|im_start|>user\nc<|im_end|>\n<|im_start|>assistant\nreply", &reused);
  EXPECT_GT(reused, 5);
}

TEST_F(PromptCacheTest, MessagesAndSnapshotBoundariesOfARenderedPrompt) {
  const std::string text = kPrompt +
                           "Hello!<|im_end|>\n<|im_start|>user\n<tool_response>\nok\n"
                           "</tool_response><|im_end|>\n<|im_start|>assistant\n";
  const std::vector<int32_t> ids = Encode(text);
  const std::vector<PromptMessage> messages = server::FindMessages(ids, *tokenizer_);
  ASSERT_EQ(messages.size(), 5u);
  const std::vector<std::string> roles = {"system", "user", "assistant", "user", "assistant"};
  const int32_t start = tokenizer_->FindToken("<|im_start|>");
  for (size_t i = 0; i < messages.size(); ++i) {
    EXPECT_EQ(messages[i].role, roles[i]);
    EXPECT_EQ(ids[messages[i].begin], start);
    EXPECT_EQ(
        tokenizer_->Decode(std::span(ids).subspan(messages[i].begin,
                                                  messages[i].content_begin - messages[i].begin),
                           true),
        "<|im_start|>" + roles[i] + "\n");
  }
  const auto n = static_cast<int64_t>(ids.size());
  EXPECT_EQ(messages.back().content_begin, n);
  // End of the system block, the first assistant turn's start, the last user message's start;
  // the generation prompt's end is the prompt's end, which the engine snapshots anyway.
  EXPECT_EQ(
      server::SnapshotBoundaries(messages, n),
      (std::vector<int64_t>{messages[1].begin, messages[2].content_begin, messages[3].begin}));
  EXPECT_EQ(server::MessageAt(messages, 0), 0);
  EXPECT_EQ(server::MessageAt(messages, messages[2].content_begin + 1), 2);
  EXPECT_TRUE(server::FindMessages(Encode("no markup here"), *tokenizer_).empty());
}

TEST_F(PromptCacheTest, MissDiagnosticsShowWhereAndWhy) {
  server::BuiltPrompt prompt;
  prompt.text = kPrompt + "Sure, here it is.";
  prompt.ids = Encode(prompt.text);
  prompt.messages = server::FindMessages(prompt.ids, *tokenizer_);
  engine::RequestTimings timings;
  timings.generation.prompt_tokens = static_cast<int64_t>(prompt.ids.size());
  timings.generation.cached_prompt_tokens = prompt.messages[2].content_begin;
  timings.generation.computed_prompt_tokens =
      timings.generation.prompt_tokens - timings.generation.cached_prompt_tokens;
  const int64_t diverged = prompt.messages[2].content_begin + 2;
  timings.cache.longest_match_tokens = diverged;
  timings.cache.limit = cache::ResumeLimit::kNoSnapshot;
  timings.cache.cached_window = Encode("No way.", false);
  const std::string line = server::MissDiagnostics("r1", prompt, timings, *tokenizer_);
  EXPECT_NE(line.find("uid=r1 reused " + std::to_string(timings.generation.cached_prompt_tokens) +
                      " of " + std::to_string(diverged) + " cached matching tokens (no_snapshot)"),
            std::string::npos)
      << line;
  EXPECT_NE(line.find("diverged at token " + std::to_string(diverged) + " of " +
                      std::to_string(prompt.ids.size()) + " in message 2 (assistant)"),
            std::string::npos)
      << line;
  auto escaped = [&](std::span<const int32_t> ids) {
    std::string text = tokenizer_->Decode(ids, true), out;
    for (char c : text) out += c == '\n' ? std::string("\\n") : std::string(1, c);
    return out;
  };
  const std::span<const int32_t> before = std::span(prompt.ids).subspan(diverged - 8, 8);
  const std::span<const int32_t> after =
      std::span(prompt.ids).subspan(diverged, prompt.ids.size() - diverged);
  EXPECT_NE(line.find("request \"" + escaped(before) + "|" + escaped(after) + "\" cached \"" +
                      escaped(before) + "|No way.\""),
            std::string::npos)
      << line;
  EXPECT_EQ(line.find('\n'), std::string::npos) << "one line";

  timings.cache.longest_match_tokens = timings.generation.cached_prompt_tokens;
  EXPECT_EQ(server::MissDiagnostics("r1", prompt, timings, *tokenizer_), "");

  timings.cache.tier = engine::CacheTier::kMemory;
  timings.generation.generated_tokens = 11;
  timings.generation.decode_s = 0.5;
  timings.cache.restore_s = 0.25;
  timings.ttft_s = 1.5;
  auto request_line = [&] {
    server::RequestRecord record = server::MakeRequestRecord(
        "r1", api::ApiKind::kChatCompletions, server::Outcome::kOk, prompt, timings);
    record.method = "POST";
    record.path = "/v1/chat/completions";
    record.peer = "127.0.0.1";
    record.status = 200;
    return server::RequestLogLine(record);
  };
  EXPECT_EQ(request_line(),
            "POST /v1/chat/completions 200 ok from 127.0.0.1 uid=r1 HIT(memory) cached=" +
                std::to_string(timings.generation.cached_prompt_tokens) + " prefill=" +
                std::to_string(timings.generation.computed_prompt_tokens) +
                " restore=0.25s ttft=1.50s decode=11@20.0tok/s");
  timings.generation.cached_prompt_tokens = 0;
  EXPECT_NE(request_line().find(" uid=r1 MISS(no_snapshot) cached=0 "), std::string::npos)
      << request_line();
}

// --chat-template replaces the model's template; one that does not parse is a clear error.
TEST_F(PromptCacheTest, AGivenTemplateReplacesTheModels) {
  auto tokenizer = text::Tokenizer::FromVocab(MakeDefaultVocab(300));
  ASSERT_TRUE(tokenizer.ok());
  auto builder = server::PromptBuilder::Create(
      tokenizer->get(), 1 << 20, "{% for m in messages %}[{{ m.content }}]{% endfor %}");
  ASSERT_TRUE(builder.ok()) << builder.status().ToString();
  api::ChatRequest request;
  request.messages = api::Json::parse(R"([{"role": "user", "content": "Hi"}])");
  auto prompt = (*builder)->Build(request);
  ASSERT_TRUE(prompt.ok()) << prompt.status().ToString();
  EXPECT_EQ(prompt->text, "[Hi]");
  auto broken = server::PromptBuilder::Create(tokenizer->get(), 1 << 20, "{% for %}");
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.status().message().find("the given chat template does not parse"),
            std::string::npos);
}

TEST_F(PromptCacheTest, AModelWithoutATemplateFallsBackToChatMl) {
  text::Vocab vocab = MakeDefaultVocab(300);
  vocab.chat_template.clear();
  auto tokenizer = text::Tokenizer::FromVocab(std::move(vocab));
  ASSERT_TRUE(tokenizer.ok());
  auto builder = server::PromptBuilder::Create(tokenizer->get(), 1 << 20);
  ASSERT_TRUE(builder.ok()) << builder.status().ToString();
  api::ChatRequest request;
  request.messages = api::Json::parse(R"([{"role": "system", "content": "Be brief."},
      {"role": "user", "content": "Hi"}])");
  auto prompt = (*builder)->Build(request);
  ASSERT_TRUE(prompt.ok()) << prompt.status().ToString();
  EXPECT_EQ(prompt->text,
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
            "<|im_start|>assistant\n");
  ASSERT_EQ(prompt->messages.size(), 3u);
  EXPECT_EQ(prompt->boundary_positions.front(), prompt->messages[1].begin);
}

// Claude Code appends a system reminder after a tool result. With Qwen3.5's template, which
// refuses late system messages and strips the reasoning of turns before the last query, the
// reminder must leave everything before it as it rendered without it, on its own turn and on
// the turns after it.
TEST_F(PromptCacheTest, ALateSystemReminderLeavesEarlierTurnsAsTheyRendered) {
  const std::string qwen35 = SharedTemplate("Qwen3.5-4B");
  if (qwen35.empty()) GTEST_SKIP() << "templates not found under " << SharedDir();
  text::Vocab vocab = MakeDefaultVocab(300);
  vocab.chat_template = qwen35;
  auto tokenizer = text::Tokenizer::FromVocab(std::move(vocab));
  ASSERT_TRUE(tokenizer.ok());
  auto builder = server::PromptBuilder::Create(tokenizer->get(), 1 << 20);
  ASSERT_TRUE(builder.ok()) << builder.status().ToString();
  const api::Json base = api::Json::parse(R"([
      {"role": "system", "content": "You are an agent."},
      {"role": "user", "content": "Fix the bug."},
      {"role": "assistant", "content": "<think>Look first.</think>Reading.",
       "tool_calls": [{"id": "c1", "type": "function",
                       "function": {"name": "read", "arguments": {"path": "a.c"}}}]},
      {"role": "tool", "tool_call_id": "c1", "content": "int main() {}"}])");
  auto render = [&](const api::Json& messages) {
    api::ChatRequest request;
    request.messages = messages;
    auto prompt = (*builder)->Build(request);
    EXPECT_TRUE(prompt.ok()) << prompt.status().ToString();
    return prompt.ok() ? prompt->text : std::string();
  };
  const std::string generation = "<|im_start|>assistant\n<think>\n";
  const std::string before = render(base);
  ASSERT_TRUE(before.ends_with(generation)) << before;
  const std::string history = before.substr(0, before.size() - generation.size());
  ASSERT_NE(history.find("Look first."), std::string::npos) << "the reasoning is rendered";

  api::Json reminded = base;
  reminded.push_back({{"role", "system"},
                      {"content", {{{"type", "text"}, {"text", " Remember the tests. "}}}}});
  const std::string with_reminder = render(reminded);
  EXPECT_EQ(with_reminder,
            history + "<|im_start|>system\nRemember the tests.<|im_end|>\n" + generation);

  api::Json next = reminded;
  next.push_back({{"role", "assistant"}, {"content", "<think>Run them.</think>"},
                  {"tool_calls", {{{"id", "c2"}, {"type", "function"},
                                   {"function", {{"name", "test"}, {"arguments", api::Json::object()}}}}}}});
  next.push_back({{"role", "tool"}, {"tool_call_id", "c2"}, {"content", "ok"}});
  const std::string after = render(next);
  EXPECT_TRUE(after.starts_with(with_reminder.substr(0, with_reminder.size() -
                                                          generation.size())))
      << after;
}

}  // namespace
}  // namespace ds::apps
