// deltaserve: one binary, several subcommands (run, make-model, ...).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <map>

#include "apps/commands.h"
#include "base/log.h"

int main(int argc, char** argv) {
  CLI::App app{"deltaserve: an inference server for hybrid-attention language models"};
  app.require_subcommand(1);
  std::string log_level;
  app.add_option("--log-level", log_level,
                 "debug, info, warn, error or off (default: info for serve, else warn)")
      ->envname("DELTASERVE_LOG_LEVEL");
  // CLI11 reads config files on the main command only; a subcommand's keys go in its own
  // section ([serve]). Fallthrough lets these options follow the subcommand's name.
  app.set_config("--config", "", "config file: key = value lines, [serve] section for serve")
      ->envname("DELTASERVE_CONFIG");
  app.fallthrough();

  std::map<CLI::App*, ds::apps::CommandFn> commands;
  CLI::App* serve =
      app.add_subcommand("serve", "serve the OpenAI- and Anthropic-compatible HTTP API");
  commands[serve] = ds::apps::RegisterServe(serve);
  CLI::App* run = app.add_subcommand("run", "generate text from a prompt and print timings");
  commands[run] = ds::apps::RegisterRun(run);
  CLI::App* make_model =
      app.add_subcommand("make-model", "write a GGUF model with seeded random weights");
  commands[make_model] = ds::apps::RegisterMakeModel(make_model);
  CLI::App* bench_model = app.add_subcommand(
      "bench-model", "measure prefill and decode tok/s and the memory read bandwidth");
  commands[bench_model] = ds::apps::RegisterBenchModel(bench_model);
  CLI::App* bench = app.add_subcommand(
      "bench", "benchmark a running OpenAI-compatible server: sweep, compare, replay, concurrency");
  commands[bench] = ds::apps::RegisterBench(bench);
  CLI::App* cache = app.add_subcommand(
      "cache", "inspect and maintain the disk cache: ls, stat, verify, gc, clear");
  commands[cache] = ds::apps::RegisterCache(cache);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  // The server's one line per request is at info; the other commands print their own results.
  if (log_level.empty()) log_level = serve->parsed() ? "info" : "warn";
  ds::SetLogLevel(log_level);
  for (auto& [sub, fn] : commands) {
    if (sub->parsed()) return fn();
  }
  return 1;
}
