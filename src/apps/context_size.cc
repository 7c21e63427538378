#include "apps/context_size.h"

#include <cstdio>

namespace ds::apps {
namespace {

// Claude Code's first request is about 53k tokens, Qwen Code's and opencode's 20-45k, and a
// session grows from there.
constexpr int64_t kAgentPromptTokens = 65536;
constexpr int64_t kUnknownTrainedContext = 65536;
constexpr int64_t kSmallestDefault = 4096;

std::string Gib(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f GiB", static_cast<double>(bytes) / (1 << 30));
  return text;
}

int64_t SequenceBytes(const SequenceMemory& memory, int64_t tokens) {
  return memory.recurrent_bytes + memory.kv_bytes_per_token * tokens;
}

}  // namespace

SequenceMemory MemoryOf(const state::StateLayout& layout) {
  SequenceMemory memory;
  for (state::LayerKind kind : layout.layer_kinds) {
    if (kind == state::LayerKind::kAttention) {
      memory.kv_bytes_per_token += layout.KeyRowBytes() + layout.ValueRowBytes();
    } else {
      memory.recurrent_bytes +=
          static_cast<int64_t>(sizeof(float)) * (layout.conv_floats + layout.ssm_floats);
    }
  }
  return memory;
}

int64_t DefaultContextTokens(int64_t trained, const SequenceMemory& memory, int parallel,
                             int64_t usable_bytes) {
  int64_t context = trained > 0 ? trained : kUnknownTrainedContext;
  while (usable_bytes >= 0 && context > kSmallestDefault &&
         parallel * SequenceBytes(memory, context) > usable_bytes) {
    context /= 2;
  }
  return context;
}

std::vector<std::string> ContextNotes(int64_t context, int64_t trained, int parallel,
                                      const SequenceMemory& memory, bool chosen) {
  std::vector<std::string> notes;
  notes.push_back("context " + std::to_string(context) + " tokens per sequence" +
                  (chosen ? "" : " (--ctx-size)") + ": " +
                  std::to_string(memory.kv_bytes_per_token / 1024) + " KiB of KV per token, " +
                  Gib(SequenceBytes(memory, context)) + " per full sequence, " +
                  Gib(parallel * SequenceBytes(memory, context)) + " for " +
                  std::to_string(parallel) + " (taken as prompts grow)");
  if (trained > 0 && context < trained) {
    notes.push_back("the context is smaller than the model's " + std::to_string(trained) +
                    " tokens" + (chosen ? " to fit this machine's memory" : "") +
                    ": longer prompts are refused (--ctx-size " + std::to_string(trained) +
                    " serves them)");
  }
  if (context < kAgentPromptTokens) {
    notes.push_back("agent clients send prompts of 20-60k tokens (Claude Code's first is about "
                    "53k); a context of " + std::to_string(context) +
                    " refuses many of them: use --ctx-size " +
                    std::to_string(kAgentPromptTokens) + " or more");
  }
  return notes;
}

}  // namespace ds::apps
