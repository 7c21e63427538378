// `deltaserve serve`: the OpenAI- and Anthropic-compatible HTTP server. Every flag can also be
// set in the [serve] section of the config file given by --config (TOML-style `key = value`,
// keys named like the long flags) and through a DELTASERVE_* environment variable; precedence is
// flag, then config file, then environment, then default (docs/configuration.md).
#include <pthread.h>
#include <sys/resource.h>

#include <csignal>
#include <cstdio>
#include <filesystem>

#include "apps/cache_settings.h"
#include "apps/commands.h"
#include "apps/context_size.h"
#include "apps/kv_quant.h"
#include "apps/loaded_model.h"
#include "apps/model_fingerprint.h"
#include "base/file_text.h"
#include "base/log.h"
#include "base/system_memory.h"
#include "engine/engine.h"
#include "kernels/kernels.h"
#include "server/chat_service.h"
#include "server/http_server.h"

namespace ds::apps {
namespace {

struct ServeFlags {
  std::string model_path;
  bool mmap = false;
  server::ServerOptions server;
  engine::EngineOptions engine;
  server::ChatServiceOptions chat;
  std::string cache_config;
  int kv_quant_bits = 0;
  int v_quant_bits = kValueBitsAsKeys;
  CacheSettings cache;          // defaults, or what a flag set
  std::vector<CLI::Option*> cache_flags;  // applied over the config file when given
  std::string chat_template_path;
};

// Defaults, then the --cache-config file, then the cache flags given explicitly.
StatusOr<CacheSettings> ResolveCacheSettings(const ServeFlags& flags) {
  CacheSettings settings;
  if (!flags.cache_config.empty()) {
    DS_RETURN_IF_ERROR(ApplyCacheConfigFile(flags.cache_config, &settings));
  }
  for (CLI::Option* option : flags.cache_flags) {
    if (option->count() == 0) continue;
    const std::string name = option->get_name();
    if (name == "--cache-ram") {
      settings.memory_mib = flags.cache.memory_mib;
      settings.memory_enabled = flags.cache.memory_mib > 0;
    } else if (name == "--cache-dir") {
      settings.disk_dir = flags.cache.disk_dir;
    } else if (name == "--cache-disk-gb") {
      settings.disk_cap_gb = flags.cache.disk_cap_gb;
      settings.disk_enabled = flags.cache.disk_cap_gb > 0;
    } else if (name == "--cache-block") {
      settings.block_tokens = flags.cache.block_tokens;
    } else if (name == "--snapshot-interval") {
      settings.snapshot_interval = flags.cache.snapshot_interval;
    }
  }
  DS_RETURN_IF_ERROR(ValidateCacheSettings(settings));
  return settings;
}

// SIGINT and SIGTERM are blocked in every thread and taken by sigwait() in the main thread, so
// shutdown runs as ordinary code rather than in a signal handler.
sigset_t BlockShutdownSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

// Each open connection is a descriptor, and the reception holds up to 4,096 of them: a soft limit
// of 1,024 would have accept fail long before.
void RaiseDescriptorLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return;
  limit.rlim_cur = limit.rlim_max;
  if (setrlimit(RLIMIT_NOFILE, &limit) != 0) {
    DS_LOG_WARN("cannot raise the open-file limit to {}: fewer connections can be open",
                static_cast<uint64_t>(limit.rlim_max));
  }
}

Status Serve(ServeFlags flags) {
  sigset_t shutdown_signals = BlockShutdownSignals();  // before any thread starts
  // A file-size limit turns a disk-tier write into an error the tier reports, not a crash.
  std::signal(SIGXFSZ, SIG_IGN);
  RaiseDescriptorLimit();
  const gguf::Residency residency =
      flags.mmap ? gguf::Residency::kMapped : gguf::Residency::kHugePages;
  DS_ASSIGN_OR_RETURN(LoadedModel loaded, OpenModel(flags.model_path, residency));
  DS_ASSIGN_OR_RETURN(const KvDtypes kv_dtypes,
                      KvDtypesFor(flags.kv_quant_bits, flags.v_quant_bits,
                                  loaded.model->hparams()));
  flags.engine.k_dtype = kv_dtypes.key;
  flags.engine.v_dtype = kv_dtypes.value;
  DS_ASSIGN_OR_RETURN(CacheSettings cache, ResolveCacheSettings(flags));
  flags.engine.cache = EngineCacheOptions(cache, ModelFingerprint(*loaded.file));
  state::StateLayout layout = loaded.model->StateLayoutFor(0);
  layout.k_dtype = kv_dtypes.key;
  layout.v_dtype = kv_dtypes.value;
  const SequenceMemory memory = MemoryOf(layout);
  const int64_t trained = loaded.model->hparams().n_ctx_train;
  const bool choose_context = flags.engine.context_tokens <= 0;
  if (choose_context) {
    // What the machine has left once the prefix cache has its budget, with a quarter spare.
    const int64_t available = AvailableMemoryBytes();
    const int64_t usable =
        available < 0
            ? -1
            : std::max<int64_t>(available / 4 * 3 - flags.engine.cache.budget_bytes, 0);
    flags.engine.context_tokens =
        DefaultContextTokens(trained, memory, flags.engine.max_parallel, usable);
  }
  if (!flags.chat_template_path.empty()) {
    DS_ASSIGN_OR_RETURN(flags.chat.chat_template, ReadFileText(flags.chat_template_path));
  }
  if (cache.disk_enabled && cache.disk_cap_gb > 0 && flags.engine.cache.budget_bytes == 0) {
    DS_LOG_INFO("disk cache tier off: it needs the memory tier, which is off");
  }
  engine::Engine engine(loaded.model.get(), flags.engine);
  DS_ASSIGN_OR_RETURN(std::unique_ptr<server::ChatService> service,
                      server::ChatService::Create(&engine, loaded.tokenizer.get(), flags.chat));
  if (engine.cache() != nullptr && engine.cache()->disk() != nullptr) {
    // As many as the continuity memo keeps.
    const std::vector<std::vector<int32_t>> kept = engine.cache()->disk()->RecentSequences(32);
    service->SeedContinuity(kept);
    DS_LOG_INFO("continuity: {} conversation(s) from the disk tier tokenise as before", kept.size());
  }
  if (flags.server.model_id.empty()) {
    flags.server.model_id = flags.model_path.empty()
                                ? "deltaserve-default"
                                : std::filesystem::path(flags.model_path).stem().string();
  }
  // The same bound where requests wait for an HTTP thread as where they wait for a sequence.
  flags.server.max_waiting = flags.engine.max_queued;
  server::HttpServer http(flags.server, service.get());
  DS_RETURN_IF_ERROR(http.Start());
  DS_LOG_INFO("deltaserve: serving {} ({}) on http://{}:{} with {} sequence(s) of {} tokens "
              "(K {}, V {}), prefix cache {} MiB in memory, disk tier {}, {} kernels, weights {}",
              flags.server.model_id, loaded.model->hparams().arch, flags.server.host, http.port(),
              flags.engine.max_parallel, flags.engine.context_tokens,
              tensor::DTypeName(flags.engine.k_dtype), tensor::DTypeName(flags.engine.v_dtype),
              flags.engine.cache.budget_bytes >> 20,
              engine.cache() != nullptr && engine.cache()->disk() != nullptr
                  ? engine.cache()->disk()->options().dir
                  : std::string("off"),
              kernels::ActiveIsa(), WeightsResidencyText(*loaded.file));
  for (const std::string& note : ContextNotes(flags.engine.context_tokens, trained,
                                             flags.engine.max_parallel, memory, choose_context)) {
    if (note.rfind("context ", 0) == 0) {
      DS_LOG_INFO("deltaserve: {}", note);
    } else {
      DS_LOG_WARN("deltaserve: {}", note);
    }
  }
  std::fprintf(stderr, "deltaserve: listening on http://%s:%d\n", flags.server.host.c_str(),
               http.port());
  int signal_number = 0;
  sigwait(&shutdown_signals, &signal_number);
  DS_LOG_INFO("deltaserve: signal {}, shutting down", signal_number);
  http.Stop();
  return OkStatus();
}

}  // namespace

CommandFn RegisterServe(CLI::App* app) {
  auto flags = std::make_shared<ServeFlags>();
  flags->engine.context_tokens = 0;
  auto env = [](CLI::Option* option, const char* name) { option->envname(name); };
  env(app->add_option("-m,--model", flags->model_path, "GGUF model (default: the embedded one)"),
      "DELTASERVE_MODEL");
  env(app->add_option("--host", flags->server.host, "address to bind")->capture_default_str(),
      "DELTASERVE_HOST");
  env(app->add_option("--port", flags->server.port, "port to bind")->capture_default_str(),
      "DELTASERVE_PORT");
  env(app->add_option("--api-key", flags->server.api_key,
                      "require this key (Authorization: Bearer or x-api-key)"),
      "DELTASERVE_API_KEY");
  env(app->add_option("--alias", flags->server.aliases, "more model names to list"),
      "DELTASERVE_ALIAS");
  env(app->add_option("--allow-host", flags->server.allowed_hosts,
                      "without --api-key, also serve requests whose Host or Origin names this "
                      "host (repeatable; * for any)"),
      "DELTASERVE_ALLOW_HOST");
  env(app->add_option("--model-id", flags->server.model_id, "the model's name in /v1/models"),
      "DELTASERVE_MODEL_ID");
  env(app->add_option("--parallel", flags->engine.max_parallel, "sequences served at once")
          ->capture_default_str(),
      "DELTASERVE_PARALLEL");
  env(app->add_option("--max-queue", flags->engine.max_queued,
                      "requests waiting beyond --parallel; more get 503")
          ->capture_default_str(),
      "DELTASERVE_MAX_QUEUE");
  env(app->add_option("-c,--ctx-size", flags->engine.context_tokens,
                      "context size per sequence (default: the model's)"),
      "DELTASERVE_CTX_SIZE");
  env(app->add_option("--kv-quant", flags->kv_quant_bits, kKvQuantHelp)->capture_default_str(),
      "DELTASERVE_KV_QUANT");
  env(app->add_option("--v-quant", flags->v_quant_bits, kValueQuantHelp), "DELTASERVE_V_QUANT");
  env(app->add_flag("--mmap", flags->mmap, kMmapHelp), "DELTASERVE_MMAP");
  env(app->add_option("--prefill-chunk", flags->engine.prefill_chunk_tokens,
                      "prompt tokens per engine step")
          ->capture_default_str(),
      "DELTASERVE_PREFILL_CHUNK");
  env(app->add_option("-t,--threads", flags->engine.threads, "threads (default: one per CPU)"),
      "DELTASERVE_THREADS");
  env(app->add_option("--max-body-bytes", flags->server.max_body_bytes, "largest request body")
          ->capture_default_str(),
      "DELTASERVE_MAX_BODY_BYTES");
  auto cache_flag = [&](CLI::Option* option, const char* name) {
    env(option, name);
    flags->cache_flags.push_back(option);
  };
  env(app->add_option("--cache-config", flags->cache_config,
                      "JSON file with every cache setting (flags given override it)"),
      "DELTASERVE_CACHE_CONFIG");
  cache_flag(app->add_option("--cache-ram", flags->cache.memory_mib,
                             "MiB of memory for the prefix cache (0: off)")
                 ->capture_default_str(),
             "DELTASERVE_CACHE_RAM");
  cache_flag(app->add_option("--cache-dir", flags->cache.disk_dir,
                             "directory of the disk tier (default: $XDG_CACHE_HOME/deltaserve, "
                             "else ~/.cache/deltaserve)"),
             "DELTASERVE_CACHE_DIR");
  cache_flag(app->add_option("--cache-disk-gb", flags->cache.disk_cap_gb,
                             "GB the disk tier may hold (0: no disk tier)")
                 ->capture_default_str(),
             "DELTASERVE_CACHE_DISK_GB");
  cache_flag(app->add_option("--cache-block", flags->cache.block_tokens,
                             "tokens per cached KV block")
                 ->capture_default_str(),
             "DELTASERVE_CACHE_BLOCK");
  cache_flag(app->add_option("--snapshot-interval", flags->cache.snapshot_interval,
                             "hybrid models: snapshot every this many prompt tokens, then an "
                             "eighth of the position apart (0: never)")
                 ->capture_default_str(),
             "DELTASERVE_SNAPSHOT_INTERVAL");
  env(app->add_option("--chat-template", flags->chat_template_path,
                      "Jinja chat template file to use instead of the model's"),
      "DELTASERVE_CHAT_TEMPLATE");
  env(app->add_option("--max-tokens", flags->chat.max_output_tokens,
                      "cap on each reply's tokens (0: none; a request's smaller limit wins)")
          ->capture_default_str(),
      "DELTASERVE_MAX_TOKENS");
  env(app->add_option("--volatile-system-prefix", flags->chat.volatile_system_prefixes,
                      "drop Anthropic system blocks starting with this (repeatable; an empty "
                      "value clears the list)")
          ->capture_default_str(),
      "DELTASERVE_VOLATILE_SYSTEM_PREFIX");
  return [flags] {
    Status status = Serve(*flags);
    if (status.ok()) return 0;
    std::fprintf(stderr, "deltaserve serve: %s\n", status.message().c_str());
    return 1;
  };
}

}  // namespace ds::apps
