// The built-in tokenizer and chat template of models made without a tokenizer.json.
#include "apps/default_vocab.h"

#include <gtest/gtest.h>

#include "text/jinja/jinja.h"
#include "text/tokenizer.h"

namespace ds::apps {
namespace {

using Json = nlohmann::ordered_json;

TEST(DefaultVocabTest, RoundTripsTextAndKnowsItsSpecialTokens) {
  auto tokenizer = text::Tokenizer::FromVocab(MakeDefaultVocab(400));
  ASSERT_TRUE(tokenizer.ok());
  const std::string text = "Once upon a time, a robot wrote 42 notes. Ünïcödé ✓";
  std::vector<int32_t> ids = (*tokenizer)->Encode(text, false, false);
  EXPECT_LT(ids.size(), text.size()) << "learned merges should shorten common English";
  EXPECT_EQ((*tokenizer)->Decode(ids), text);
  std::vector<int32_t> chat = (*tokenizer)->Encode("<|im_start|>user\nhi<|im_end|>", false, true);
  EXPECT_EQ(chat.front(), (*tokenizer)->FindToken("<|im_start|>"));
  EXPECT_TRUE((*tokenizer)->IsEog((*tokenizer)->FindToken("<|im_end|>")));
}

TEST(DefaultVocabTest, ChatTemplateRendersToolsCallsAndResults) {
  text::Vocab vocab = MakeDefaultVocab(10);
  auto tmpl = text::jinja::Template::Parse(vocab.chat_template);
  ASSERT_TRUE(tmpl.ok()) << tmpl.status().ToString();
  Json context = Json::parse(R"({
    "messages": [
      {"role": "system", "content": "Be brief."},
      {"role": "user", "content": "Read a.txt"},
      {"role": "assistant", "content": "", "reasoning_content": "need the file",
       "tool_calls": [{"type": "function",
                       "function": {"name": "read", "arguments": {"path": "a.txt"}}}]},
      {"role": "tool", "content": "hello"},
      {"role": "tool", "content": "world"}
    ],
    "tools": [{"type": "function", "function": {"name": "read", "parameters": {}}}],
    "add_generation_prompt": true,
    "enable_thinking": false
  })");
  auto rendered = tmpl->Render(context);
  ASSERT_TRUE(rendered.ok()) << rendered.status().ToString();
  EXPECT_EQ(*rendered,
            "<|im_start|>system\nBe brief.\n\n# Tools\n\nThese functions are available, described "
            "as JSON schemas:\n<tools>\n{\"type\": \"function\", \"function\": {\"name\": "
            "\"read\", \"parameters\": {}}}\n</tools>\n\nTo call a function, answer with a JSON "
            "object holding its name and arguments inside <tool_call></tool_call> tags:\n"
            "<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n"
            "</tool_call><|im_end|>\n"
            "<|im_start|>user\nRead a.txt<|im_end|>\n"
            "<|im_start|>assistant\n<think>\nneed the file\n</think>\n\n\n<tool_call>\n"
            "{\"name\": \"read\", \"arguments\": {\"path\": \"a.txt\"}}\n</tool_call><|im_end|>\n"
            "<|im_start|>user\n<tool_response>\nhello\n</tool_response>\n<tool_response>\n"
            "world\n</tool_response><|im_end|>\n"
            "<|im_start|>assistant\n<think>\n\n</think>\n\n");
}

}  // namespace
}  // namespace ds::apps
