// The subcommands of the deltaserve binary. Each Register* adds its flags to the CLI and returns
// the function to run when it is chosen; the function returns the process exit status.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace ds::apps {

using CommandFn = std::function<int()>;

CommandFn RegisterRun(CLI::App* app);
CommandFn RegisterMakeModel(CLI::App* app);
CommandFn RegisterBenchModel(CLI::App* app);
CommandFn RegisterServe(CLI::App* app);
CommandFn RegisterBench(CLI::App* app);
CommandFn RegisterCache(CLI::App* app);

}  // namespace ds::apps
