// `deltaserve bench`: end-to-end benchmarks of any OpenAI-compatible server (sweep, compare,
// replay, concurrency), optionally against a second server in alternation, written as JSON, CSV
// and SVG charts.
#include <charconv>
#include <cstdio>
#include <memory>

#include "apps/commands.h"
#include "base/file_text.h"
#include "bench/extra_body.h"
#include "bench/failures.h"
#include "bench/modes.h"
#include "bench/rows.h"

namespace ds::apps {
namespace {

// Exit statuses (docs/bench.md): scripts can tell results that are written but incomplete from
// a run that produced none.
constexpr int kExitNotRun = 1;      // bad flags or input, or the files could not be written
constexpr int kExitRowsFailed = 2;  // the files are written, but at least one row failed

struct TargetFlags {
  std::string url = "http://127.0.0.1:8080";
  std::string vs_url;
  std::string label;
  std::string vs_label;
  std::string model;
  std::string vs_model;
  std::string api_key;
  std::string vs_api_key;
  std::string api = "chat";
  std::string out_dir = "bench-results";
  double timeout_s = 3600;
  std::string extra_body;       // JSON text
  std::string extra_body_file;  // a file of JSON text
};

struct ModeFlags {
  TargetFlags target;
  std::vector<std::string> sizes;
  int64_t decode_tokens = 0;
  int repeats = 1;
  std::vector<std::string> traces;
  int64_t max_tokens = 16;
  bool interleave = false;
  std::vector<int64_t> clients = {1, 2, 4};
  int64_t requests_per_client = 2;
  int64_t prompt_tokens = 1024;
};

// "4096", "4k" (x1024) or "1m" (x1024^2).
StatusOr<int64_t> ParseSize(const std::string& text) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  std::string_view unit(end, text.data() + text.size() - end);
  int64_t scale = unit.empty() ? 1 : unit == "k" || unit == "K" ? 1024
                                   : unit == "m" || unit == "M" ? 1024 * 1024
                                                                : 0;
  if (ec != std::errc() || scale == 0 || value <= 0) {
    return InvalidArgumentError("bad size \"" + text + "\": give tokens, e.g. 4096 or 4k");
  }
  return value * scale;
}

StatusOr<std::vector<int64_t>> ParseSizes(const std::vector<std::string>& texts) {
  std::vector<int64_t> sizes;
  for (const std::string& t : texts) {
    DS_ASSIGN_OR_RETURN(int64_t size, ParseSize(t));
    sizes.push_back(size);
  }
  return sizes;
}

StatusOr<bench::Target> MakeTarget(const std::string& url, std::string label,
                                   const std::string& model, const std::string& api_key,
                                   const TargetFlags& flags) {
  bench::Target target;
  DS_ASSIGN_OR_RETURN(target.url, bench::ParseServerUrl(url));
  target.label = label.empty() ? target.url.host + ":" + std::to_string(target.url.port) : label;
  target.api_key = api_key;
  target.timeout_s = flags.timeout_s;
  if (flags.api == "completions") {
    target.api = bench::PromptApi::kCompletions;
  } else if (flags.api != "chat") {
    return InvalidArgumentError("--api must be chat or completions, not \"" + flags.api + "\"");
  }
  if (model.empty()) {
    StatusOr<std::string> discovered = bench::DiscoverModel(target);
    if (!discovered.ok()) {
      return Status(discovered.status().code(),
                    "finding the model: " + discovered.status().message());
    }
    target.model = *discovered;
  } else {
    target.model = model;
  }
  return target;
}

// --extra-body or --extra-body-file (they exclude each other); null when neither is given.
StatusOr<bench::Json> ExtraBody(const TargetFlags& flags) {
  if (!flags.extra_body.empty()) return bench::ParseExtraBody(flags.extra_body, "--extra-body");
  if (flags.extra_body_file.empty()) return bench::Json();
  StatusOr<std::string> text = ReadFileText(flags.extra_body_file);
  if (!text.ok()) return InvalidArgumentError("--extra-body-file " + text.status().message());
  return bench::ParseExtraBody(*text, "--extra-body-file " + flags.extra_body_file);
}

StatusOr<std::vector<bench::Target>> MakeTargets(const TargetFlags& flags) {
  // Before any request, so a typo costs no waiting.
  DS_ASSIGN_OR_RETURN(bench::Json extra_body, ExtraBody(flags));
  std::vector<bench::Target> targets;
  DS_ASSIGN_OR_RETURN(bench::Target a,
                      MakeTarget(flags.url, flags.label, flags.model, flags.api_key, flags));
  targets.push_back(std::move(a));
  if (!flags.vs_url.empty()) {
    DS_ASSIGN_OR_RETURN(bench::Target b,
                        MakeTarget(flags.vs_url, flags.vs_label, flags.vs_model,
                                   flags.vs_api_key.empty() ? flags.api_key : flags.vs_api_key,
                                   flags));
    if (b.label == targets[0].label) b.label += " (vs)";
    targets.push_back(std::move(b));
  }
  for (bench::Target& t : targets) t.extra_body = extra_body;
  return targets;
}

void AddTargetFlags(CLI::App* app, TargetFlags* flags) {
  app->add_option("--url", flags->url, "the server to measure")->capture_default_str();
  app->add_option("--vs", flags->vs_url, "a second server, run in alternation with the first");
  app->add_option("--label", flags->label, "the first server's name in reports (default host:port)");
  app->add_option("--vs-label", flags->vs_label, "the second server's name in reports");
  app->add_option("--model", flags->model, "model id to request (default: the first /v1/models)");
  app->add_option("--vs-model", flags->vs_model, "model id for the second server");
  app->add_option("--api-key", flags->api_key, "API key, sent as Bearer token and x-api-key")
      ->envname("DELTASERVE_API_KEY");
  app->add_option("--vs-api-key", flags->vs_api_key, "API key of the second server");
  app->add_option("--api", flags->api, "chat (/v1/chat/completions) or completions")
      ->capture_default_str();
  app->add_option("-o,--out", flags->out_dir, "directory for the JSON, CSV and SVG files")
      ->capture_default_str();
  app->add_option("--timeout", flags->timeout_s, "seconds one request may take")
      ->capture_default_str();
  CLI::Option* extra = app->add_option(
      "--extra-body", flags->extra_body,
      "JSON object merged into every request body, e.g. '{\"logit_bias\":{\"42\":-100}}' "
      "(objects merge deeply; null removes a field)");
  app->add_option("--extra-body-file", flags->extra_body_file,
                  "file holding such a JSON object, instead of --extra-body")
      ->excludes(extra);
}

int Finish(StatusOr<bench::Report> report, const std::vector<bench::Target>& targets,
           const std::string& out_dir) {
  if (!report.ok()) {
    std::fprintf(stderr, "deltaserve bench: %s\n", report.status().message().c_str());
    return kExitNotRun;
  }
  bench::NoteUnratedPrefill(&*report);
  bench::SummarizeFailures(&*report);
  std::printf("%s\n", bench::MarkdownTable(*report).c_str());
  if (targets.size() == 2) {
    std::printf("Ratios %s / %s:\n\n%s\n", targets[0].label.c_str(), targets[1].label.c_str(),
                bench::RatioTable(*report, targets[0].label, targets[1].label).c_str());
  }
  StatusOr<std::vector<std::string>> files = bench::WriteReport(*report, out_dir);
  if (!files.ok()) {
    std::fprintf(stderr, "deltaserve bench: %s\n", files.status().message().c_str());
    return kExitNotRun;
  }
  for (const std::string& f : *files) std::printf("wrote %s\n", f.c_str());
  std::string failures = bench::FailureLine(*report);
  if (failures.empty()) return 0;
  std::fprintf(stderr, "deltaserve bench: %s\n", failures.c_str());
  return kExitRowsFailed;
}

int RunMode(const std::string& mode, const ModeFlags& flags) {
  StatusOr<std::vector<bench::Target>> targets = MakeTargets(flags.target);
  if (!targets.ok()) {
    std::fprintf(stderr, "deltaserve bench: %s\n", targets.status().message().c_str());
    return kExitNotRun;
  }
  StatusOr<std::vector<int64_t>> sizes = ParseSizes(flags.sizes);
  if (!sizes.ok()) {
    std::fprintf(stderr, "deltaserve bench: %s\n", sizes.status().message().c_str());
    return kExitNotRun;
  }
  StatusOr<bench::Report> report = InvalidArgumentError("unknown mode " + mode);
  if (mode == "sweep") {
    report = bench::RunSweep(*targets, {*sizes, flags.decode_tokens, flags.repeats});
  } else if (mode == "compare") {
    report = bench::RunCompare(*targets, {*sizes, flags.decode_tokens});
  } else if (mode == "replay") {
    report = bench::RunReplay(*targets, {flags.traces, flags.max_tokens, flags.interleave});
  } else if (mode == "concurrency") {
    report = bench::RunConcurrency(*targets, {flags.clients, flags.requests_per_client,
                                              flags.prompt_tokens, flags.decode_tokens});
  }
  return Finish(report, *targets, flags.target.out_dir);
}

CLI::App* AddMode(CLI::App* bench, const std::string& name, const std::string& help,
                  const std::shared_ptr<ModeFlags>& flags, std::function<int()>* run) {
  CLI::App* mode = bench->add_subcommand(name, help);
  AddTargetFlags(mode, &flags->target);
  mode->callback([flags, name, run] { *run = [flags, name] { return RunMode(name, *flags); }; });
  return mode;
}

}  // namespace

CommandFn RegisterBench(CLI::App* app) {
  app->require_subcommand(1);
  auto run = std::make_shared<std::function<int()>>();
  auto sweep = std::make_shared<ModeFlags>();
  sweep->sizes = {"1k", "2k", "4k", "8k", "16k", "32k", "64k"};
  sweep->decode_tokens = 128;
  CLI::App* s = AddMode(app, "sweep", "prefill and decode tok/s at context sizes, unique prompts",
                        sweep, run.get());
  s->add_option("--sizes", sweep->sizes, "prompt tokens per point")->delimiter(',')
      ->capture_default_str();
  s->add_option("--decode-tokens", sweep->decode_tokens, "tokens generated per request")
      ->capture_default_str();
  s->add_option("--repeats", sweep->repeats, "requests per size")->capture_default_str();

  auto compare = std::make_shared<ModeFlags>();
  compare->sizes = {"1k", "4k", "16k", "32k"};
  compare->decode_tokens = 16;
  CLI::App* c = AddMode(app, "compare", "each size cold, then the same request warm", compare,
                        run.get());
  c->add_option("--sizes", compare->sizes, "prompt tokens per point")->delimiter(',')
      ->capture_default_str();
  c->add_option("--decode-tokens", compare->decode_tokens, "tokens generated per request")
      ->capture_default_str();

  auto replay = std::make_shared<ModeFlags>();
  CLI::App* r = AddMode(app, "replay", "play recorded agent sessions turn by turn", replay,
                        run.get());
  r->add_option("traces", replay->traces, "trace files (.jsonl, one request per line)")
      ->required()->check(CLI::ExistingFile);
  r->add_option("--max-tokens", replay->max_tokens, "cap on each request's max_tokens")
      ->capture_default_str();
  r->add_flag("--interleave", replay->interleave, "send several traces turn by turn");

  auto concurrency = std::make_shared<ModeFlags>();
  concurrency->decode_tokens = 64;
  CLI::App* n = AddMode(app, "concurrency", "N clients at once with unique prompts",
                        concurrency, run.get());
  n->add_option("--clients", concurrency->clients, "client counts to run")->delimiter(',')
      ->capture_default_str();
  n->add_option("--requests", concurrency->requests_per_client, "requests per client")
      ->capture_default_str();
  n->add_option("--prompt-tokens", concurrency->prompt_tokens, "prompt tokens per request")
      ->capture_default_str();
  n->add_option("--decode-tokens", concurrency->decode_tokens, "tokens generated per request")
      ->capture_default_str();
  return [run] { return (*run)(); };
}

}  // namespace ds::apps
