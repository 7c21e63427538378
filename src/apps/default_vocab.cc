#include "apps/default_vocab.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "text/unicode.h"

namespace ds::apps {
namespace {

// Training text for the merges: plain prose and a little code, written for this project.
constexpr const char* kCorpus[] = {
    "Once upon a time there was a little robot who lived in a quiet workshop by the sea. "
    "Every morning the robot opened the window, listened to the waves and counted the boats. "
    "One day a small bird landed on the table and asked the robot what it was counting. "
    "The robot said that it counted the boats because it wanted to remember every one of them. "
    "The bird laughed and said that remembering is easier when you write things down. ",
    "So the robot found a notebook and began to write. It wrote about the boats, the weather, "
    "the people who walked along the shore and the stories they told each other. After a while "
    "the notebook was full, and the robot was happy, because now it could read its memories "
    "again whenever it wanted. The bird came back every day, and they became good friends. ",
    "A server keeps the model warm so that every request only computes the new tokens. "
    "The cache stores the state of the conversation at message boundaries, and when the next "
    "turn arrives the server restores that state instead of reading the whole prompt again. ",
    "def count_tokens(messages):\n    total = 0\n    for message in messages:\n"
    "        total += len(message.content)\n    return total\n\n"
    "int main(int argc, char** argv) {\n  for (int i = 0; i < argc; ++i) {\n"
    "    printf(\"%s\\n\", argv[i]);\n  }\n  return 0;\n}\n",
    "The user asked the assistant to read a file, find the function that computes the total and "
    "fix the bug in it. The assistant read the file, ran the tests, changed one line and ran the "
    "tests again. All of them passed, and the assistant explained what it had changed and why. ",
};

// Control tokens never render as text; user-defined ones (markup the model writes) do.
constexpr const char* kControlTokens[] = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"};
constexpr const char* kUserDefinedTokens[] = {"<think>",       "</think>",        "<tool_call>",
                                              "</tool_call>", "<tool_response>", "</tool_response>"};

// ChatML as the Qwen family speaks it: tools described in the system turn, calls as JSON inside
// <tool_call> tags, results inside <tool_response> tags in a user turn, reasoning in <think>.
constexpr const char* kChatTemplate = R"TEMPLATE(
{%- if tools %}
{{- '<|im_start|>system\n' }}
{%- if messages[0].role == 'system' %}{{- messages[0].content + '\n\n' }}{%- endif %}
{{- '# Tools\n\nThese functions are available, described as JSON schemas:\n<tools>' }}
{%- for tool in tools %}{{- '\n' + (tool | tojson) }}{%- endfor %}
{{- '\n</tools>\n\nTo call a function, answer with a JSON object holding its name and ' }}
{{- 'arguments inside <tool_call></tool_call> tags:\n<tool_call>\n' }}
{{- '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n' }}
{%- elif messages[0].role == 'system' %}
{{- '<|im_start|>system\n' + messages[0].content + '<|im_end|>\n' }}
{%- endif %}
{%- for message in messages %}
{%- if message.role == 'user' or (message.role == 'system' and not loop.first) %}
{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}
{%- elif message.role == 'assistant' %}
{{- '<|im_start|>assistant\n' }}
{%- if message.reasoning_content %}
{{- '<think>\n' + message.reasoning_content + '\n</think>\n\n' }}
{%- endif %}
{{- message.content or '' }}
{%- for call in message.tool_calls or [] %}
{%- set function = call.function or call %}
{{- '\n<tool_call>\n{"name": "' + function.name + '", "arguments": ' }}
{%- if function.arguments is string %}{{- function.arguments }}
{%- else %}{{- function.arguments | tojson }}{%- endif %}
{{- '}\n</tool_call>' }}
{%- endfor %}
{{- '<|im_end|>\n' }}
{%- elif message.role == 'tool' %}
{%- if loop.first or messages[loop.index0 - 1].role != 'tool' %}
{{- '<|im_start|>user' }}
{%- endif %}
{{- '\n<tool_response>\n' + message.content + '\n</tool_response>' }}
{%- if loop.last or messages[loop.index0 + 1].role != 'tool' %}
{{- '<|im_end|>\n' }}
{%- endif %}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
{{- '<|im_start|>assistant\n' }}
{%- if enable_thinking is defined and enable_thinking is false %}
{{- '<think>\n\n</think>\n\n' }}
{%- endif %}
{%- endif %}
)TEMPLATE";

// Words as GPT-2 style pre-tokenisation cuts them: a leading space belongs to the next word.
std::map<std::string, int64_t> CountWords() {
  std::map<std::string, int64_t> counts;
  for (const char* text : kCorpus) {
    std::string s(text);
    size_t i = 0;
    while (i < s.size()) {
      size_t start = i;
      if (s[i] == ' ') ++i;
      bool alnum = i < s.size() && std::isalnum(static_cast<unsigned char>(s[i]));
      while (i < s.size() && s[i] != ' ' &&
             static_cast<bool>(std::isalnum(static_cast<unsigned char>(s[i]))) == alnum) {
        ++i;
      }
      if (i == start) ++i;
      counts[s.substr(start, i - start)]++;
    }
  }
  return counts;
}

}  // namespace

text::Vocab MakeDefaultVocab(int64_t max_merges) {
  text::Vocab vocab;
  vocab.model = text::kModelBpe;
  vocab.pre = "qwen2";
  for (int b = 0; b < 256; ++b) {
    vocab.tokens.push_back(text::ByteToByteLevel(static_cast<uint8_t>(b)));
  }
  // Each word as a sequence of byte-level symbols, merged greedily by pair frequency.
  std::vector<std::pair<std::vector<std::string>, int64_t>> words;
  for (const auto& [word, count] : CountWords()) {
    std::vector<std::string> symbols;
    for (unsigned char c : word) symbols.push_back(text::ByteToByteLevel(c));
    words.push_back({symbols, count});
  }
  for (int64_t m = 0; m < max_merges; ++m) {
    std::map<std::pair<std::string, std::string>, int64_t> pairs;
    for (const auto& [symbols, count] : words) {
      for (size_t i = 0; i + 1 < symbols.size(); ++i) pairs[{symbols[i], symbols[i + 1]}] += count;
    }
    auto best = std::max_element(pairs.begin(), pairs.end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; });
    if (best == pairs.end() || best->second < 2) break;
    const auto [left, right] = best->first;
    vocab.merges.push_back(left + " " + right);
    vocab.tokens.push_back(left + right);
    for (auto& [symbols, count] : words) {
      std::vector<std::string> merged;
      for (size_t i = 0; i < symbols.size(); ++i) {
        if (i + 1 < symbols.size() && symbols[i] == left && symbols[i + 1] == right) {
          merged.push_back(left + right);
          ++i;
        } else {
          merged.push_back(symbols[i]);
        }
      }
      symbols = std::move(merged);
    }
  }
  vocab.token_types.assign(vocab.tokens.size(), text::TokenType::kNormal);
  for (const char* token : kControlTokens) {
    vocab.tokens.push_back(token);
    vocab.token_types.push_back(text::TokenType::kControl);
  }
  for (const char* token : kUserDefinedTokens) {
    vocab.tokens.push_back(token);
    vocab.token_types.push_back(text::TokenType::kUserDefined);
  }
  auto id_of = [&vocab](const std::string& token) {
    return static_cast<int32_t>(std::find(vocab.tokens.begin(), vocab.tokens.end(), token) -
                                vocab.tokens.begin());
  };
  vocab.bos_id = id_of("<|endoftext|>");
  vocab.pad_id = vocab.bos_id;
  vocab.eos_id = id_of("<|im_end|>");
  vocab.chat_template = kChatTemplate;
  return vocab;
}

}  // namespace ds::apps
