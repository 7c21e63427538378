// `deltaserve run`: one prompt, streamed to stdout, then honest timings on stderr; or, with
// --json, one JSON object with prompt ids, generated ids and top logprobs for reference checks.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "apps/commands.h"
#include "apps/kv_quant.h"
#include "apps/loaded_model.h"
#include "engine/generate.h"
#include "text/detokenizer.h"

namespace ds::apps {
namespace {

struct RunFlags {
  std::string model_path;
  bool mmap = false;
  std::string prompt;
  bool has_prompt = false;  // -p given, possibly empty (then the prompt is just BOS)
  std::string prompt_ids;
  int64_t n_predict = 128;
  int64_t ctx_size = 0;
  int threads = 0;
  int kv_quant_bits = 0;
  int v_quant_bits = kValueBitsAsKeys;
  int64_t logprobs = 0;
  bool json = false;
  engine::SamplingParams sampling;
};

StatusOr<std::vector<int32_t>> ParseIds(const std::string& list) {
  std::vector<int32_t> ids;
  std::stringstream stream(list);
  std::string item;
  while (std::getline(stream, item, ',')) {
    char* end = nullptr;
    long value = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || value < 0 || value > INT32_MAX) {
      return InvalidArgumentError("--prompt-ids: '" + item + "' is not a token id");
    }
    ids.push_back(static_cast<int32_t>(value));
  }
  if (ids.empty()) return InvalidArgumentError("--prompt-ids is empty");
  return ids;
}

nlohmann::json ResultJson(const std::vector<int32_t>& prompt, const engine::GenerateResult& r) {
  nlohmann::json top = nlohmann::json::array();
  for (const auto& step : r.top_logprobs) {
    nlohmann::json entries = nlohmann::json::array();
    for (const engine::TokenLogprob& t : step) {
      entries.push_back({{"id", t.id}, {"logprob", t.logprob}});
    }
    top.push_back(entries);
  }
  return {{"prompt_ids", prompt}, {"generated_ids", r.generated_ids}, {"top_logprobs", top}};
}

void PrintTimings(const engine::Timings& t) {
  std::fprintf(stderr,
               "\nprompt: %lld tokens (%lld computed) in %.3f s, prefill %.1f tok/s\n"
               "decode: %lld tokens, %.1f tok/s over the decode window (%.3f s)\n",
               static_cast<long long>(t.prompt_tokens),
               static_cast<long long>(t.computed_prompt_tokens), t.prefill_s,
               t.prefill_tokens_per_s(), static_cast<long long>(t.generated_tokens),
               t.decode_tokens_per_s(), t.decode_s);
}

Status Run(const RunFlags& flags) {
  if (flags.has_prompt == !flags.prompt_ids.empty()) {
    return InvalidArgumentError("give exactly one of -p TEXT or --prompt-ids 1,2,3");
  }
  const gguf::Residency residency =
      flags.mmap ? gguf::Residency::kMapped : gguf::Residency::kHugePages;
  DS_ASSIGN_OR_RETURN(LoadedModel loaded, OpenModel(flags.model_path, residency));
  std::vector<int32_t> prompt;
  if (!flags.prompt_ids.empty()) {
    DS_ASSIGN_OR_RETURN(prompt, ParseIds(flags.prompt_ids));
  } else {
    prompt = loaded.tokenizer->Encode(flags.prompt, /*add_special=*/true, /*parse_special=*/true);
  }
  int64_t ctx = flags.ctx_size > 0 ? flags.ctx_size : loaded.model->hparams().n_ctx_train;
  if (ctx <= 0) ctx = 4096;
  state::StateLayout layout = loaded.model->StateLayoutFor(ctx);
  DS_ASSIGN_OR_RETURN(const KvDtypes kv_dtypes,
                      KvDtypesFor(flags.kv_quant_bits, flags.v_quant_bits,
                                  loaded.model->hparams()));
  layout.k_dtype = kv_dtypes.key;
  layout.v_dtype = kv_dtypes.value;
  state::SequenceState state(std::move(layout));
  ThreadPool pool(flags.threads);

  engine::GenerateOptions options;
  options.max_new_tokens = flags.n_predict;
  options.sampling = flags.sampling;
  options.top_logprobs = flags.logprobs;
  for (int32_t id : loaded.tokenizer->eog_ids()) options.stop_ids.insert(id);
  text::IncrementalDetokenizer detokenizer(loaded.tokenizer.get());
  if (!flags.json) {
    options.on_token = [&detokenizer](int32_t id) {
      std::string piece = detokenizer.Push(id);
      std::fwrite(piece.data(), 1, piece.size(), stdout);
      std::fflush(stdout);
      return true;
    };
  }
  DS_ASSIGN_OR_RETURN(engine::GenerateResult result,
                      engine::Generate(*loaded.model, &state, prompt, options, &pool));
  if (flags.json) {
    std::printf("%s\n", ResultJson(prompt, result).dump().c_str());
  } else {
    std::string rest = detokenizer.Flush();
    std::fwrite(rest.data(), 1, rest.size(), stdout);
    std::fflush(stdout);
    PrintTimings(result.timings);
  }
  return OkStatus();
}

}  // namespace

CommandFn RegisterRun(CLI::App* app) {
  auto flags = std::make_shared<RunFlags>();
  app->add_option("-m,--model", flags->model_path, "GGUF model (default: the embedded model)");
  CLI::Option* prompt =
      app->add_option("-p,--prompt", flags->prompt, "prompt text (special tokens are parsed)");
  app->add_option("--prompt-ids", flags->prompt_ids, "prompt as comma-separated token ids");
  app->add_option("-n,--n-predict", flags->n_predict, "tokens to generate")->capture_default_str();
  app->add_option("-c,--ctx-size", flags->ctx_size, "context size (default: the model's)");
  app->add_option("-t,--threads", flags->threads, "threads (default: one per CPU)");
  app->add_option("--kv-quant", flags->kv_quant_bits, kKvQuantHelp)->capture_default_str();
  app->add_option("--v-quant", flags->v_quant_bits, kValueQuantHelp);
  app->add_flag("--mmap", flags->mmap, kMmapHelp);
  app->add_option("--temp", flags->sampling.temperature, "temperature; 0 is greedy")
      ->capture_default_str();
  app->add_option("--top-k", flags->sampling.top_k, "top-k; 0 disables")->capture_default_str();
  app->add_option("--top-p", flags->sampling.top_p, "top-p; 1 disables")->capture_default_str();
  app->add_option("--min-p", flags->sampling.min_p, "min-p; 0 disables")->capture_default_str();
  app->add_option("--seed", flags->sampling.seed, "sampling seed")->capture_default_str();
  app->add_option("--repeat-penalty", flags->sampling.repeat_penalty, "1 disables")
      ->capture_default_str();
  app->add_option("--logprobs", flags->logprobs, "record the K best logprobs per token");
  app->add_flag("--json", flags->json, "print one JSON object instead of text and timings");
  return [flags, prompt] {
    flags->has_prompt = prompt->count() > 0;
    Status status = Run(*flags);
    if (status.ok()) return 0;
    std::fprintf(stderr, "deltaserve run: %s\n", status.message().c_str());
    return 1;
  };
}

}  // namespace ds::apps
