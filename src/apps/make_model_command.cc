// `deltaserve make-model`: writes a GGUF with seeded random weights for a config, optionally
// with an imported Hugging Face tokenizer. `--preset` names the configs the project relies on.
#include <cstdio>

#include "apps/commands.h"
#include "apps/default_vocab.h"
#include "apps/make_model.h"
#include "base/file_text.h"

namespace ds::apps {
namespace {

struct MakeModelFlags {
  std::string out_path;
  std::string preset;
  std::string config_path;
  std::string arch;
  std::string dtype;
  int64_t seed = -1;
  std::string tokenizer_json;
  std::string tokenizer_config;
  int64_t merges = 1700;
};

// Named configs: "default" is the model embedded in the binary; "bench" is the benchmark model
// of the README's results and docs/perf/history.md (about 745M parameters).
StatusOr<ModelConfig> Preset(const std::string& name) {
  ModelConfig c;
  if (name.empty()) return c;
  if (name == "default") {
    c.arch = "qwen35moe";
    c.name = "deltaserve-default";
    c.n_embd = 256;
    c.n_layer = 8;
    c.n_head = 4;
    c.n_head_kv = 2;
    c.head_dim = 64;
    // Agent clients send prompts of 20-60k tokens and grow them from there; the real
    // hybrids' native context is 262,144.
    c.n_ctx = 262144;
    c.ssm_state_size = 32;
    c.ssm_group_count = 2;
    c.ssm_time_step_rank = 4;
    c.n_expert = 8;
    c.n_expert_used = 2;
    c.n_ff_expert = 128;
    c.n_ff_shared_expert = 256;
    c.dtype = tensor::DType::kQ8_0;
    return c;
  }
  if (name == "bench") {
    c.arch = "qwen35moe";
    c.name = "deltaserve-bench";
    c.n_embd = 1024;
    c.n_layer = 24;
    c.n_head = 8;
    c.n_head_kv = 2;
    c.head_dim = 128;
    c.n_rot = 32;
    c.n_ctx = 65536;
    c.ssm_state_size = 64;
    c.ssm_group_count = 8;
    c.ssm_time_step_rank = 16;
    c.n_expert = 32;
    c.n_expert_used = 4;
    c.n_ff_expert = 256;
    c.n_ff_shared_expert = 512;
    c.dtype = tensor::DType::kQ8_0;
    return c;
  }
  return InvalidArgumentError("unknown preset '" + name + "' (known: default, bench)");
}

Status MakeModelMain(const MakeModelFlags& flags) {
  DS_ASSIGN_OR_RETURN(ModelConfig config, Preset(flags.preset));
  if (!flags.config_path.empty()) {
    DS_ASSIGN_OR_RETURN(std::string json, ReadFileText(flags.config_path));
    DS_RETURN_IF_ERROR(ApplyConfigJson(json, &config));
  }
  if (!flags.arch.empty()) config.arch = flags.arch;
  if (flags.seed >= 0) config.seed = static_cast<uint64_t>(flags.seed);
  if (!flags.dtype.empty()) {
    std::optional<tensor::DType> dtype = tensor::ParseDType(flags.dtype);
    if (!dtype) return InvalidArgumentError("unknown dtype '" + flags.dtype + "'");
    config.dtype = *dtype;
  }
  text::Vocab vocab;
  if (flags.tokenizer_json.empty()) {
    vocab = MakeDefaultVocab(flags.merges);
  } else {
    DS_ASSIGN_OR_RETURN(vocab, text::ImportHfTokenizer(flags.tokenizer_json,
                                                       flags.tokenizer_config));
  }
  DS_ASSIGN_OR_RETURN(gguf::Writer writer, MakeModel(config, vocab));
  return writer.WriteFile(flags.out_path);
}

}  // namespace

CommandFn RegisterMakeModel(CLI::App* app) {
  auto flags = std::make_shared<MakeModelFlags>();
  app->add_option("-o,--out", flags->out_path, "output GGUF path")->required();
  app->add_option("--preset", flags->preset, "named config: default or bench");
  app->add_option("--config", flags->config_path,
                  "JSON config: arch, n_embd, n_layer, n_head, n_head_kv, head_dim, n_rot, n_ff, "
                  "n_ctx, dtype, seed, tied_output, n_expert, n_expert_used, n_ff_expert, "
                  "n_ff_shared_expert, ssm_state_size, ssm_group_count, ssm_time_step_rank, ...");
  app->add_option("--arch", flags->arch,
                  "llama, qwen2, qwen3, qwen35, qwen35moe or qwen3next (overrides the config)");
  app->add_option("--dtype", flags->dtype, "weight type, e.g. f32, f16, q8_0, q4_K");
  app->add_option("--seed", flags->seed, "weight seed");
  app->add_option("--tokenizer", flags->tokenizer_json, "Hugging Face tokenizer.json to import");
  app->add_option("--tokenizer-config", flags->tokenizer_config,
                  "tokenizer_config.json (chat template, special tokens)");
  app->add_option("--merges", flags->merges, "BPE merges to learn for the built-in tokenizer")
      ->capture_default_str();
  return [flags] {
    Status status = MakeModelMain(*flags);
    if (status.ok()) return 0;
    std::fprintf(stderr, "deltaserve make-model: %s\n", status.message().c_str());
    return 1;
  };
}

}  // namespace ds::apps
