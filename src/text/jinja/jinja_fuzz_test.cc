// Time-boxed mutation fuzzing of the template engine with the real chat templates of
// ../shared/testdata/templates. DS_FUZZ_SECONDS bounds the run (default 5); scripts/test.sh runs
// it longer under ASan+UBSan.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "text/jinja/jinja.h"

namespace ds::text::jinja {
namespace {

using nlohmann::ordered_json;

double FuzzSeconds() {
  const char* env = std::getenv("DS_FUZZ_SECONDS");
  return env != nullptr ? std::atof(env) : 5.0;
}

std::vector<std::string> FuzzSeeds() {
  std::vector<std::string> seeds = {std::string(kChatMlTemplate)};
  const char* env = std::getenv("DS_SHARED_DIR");
  const std::filesystem::path dir = std::string(env != nullptr ? env : "../shared") +
                                    "/testdata/templates";
  if (std::filesystem::exists(dir)) {
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      std::ifstream in(entry.path(), std::ios::binary);
      std::stringstream buffer;
      buffer << in.rdbuf();
      seeds.push_back(buffer.str());
    }
  }
  return seeds;
}

// Random edits of real templates must parse or fail cleanly, and rendering must terminate with a
// value or a Status within the engine's bounds (the sanitizer build turns any memory error into
// a failure).
TEST(JinjaFuzzTest, MutatedTemplatesFailCleanly) {
  static const char* kFragments[] = {
      "{%", "%}", "{{", "}}", "{#", "#}", "(", ")", "[", "]", "'", "\"", "-", "|", " is ",
      " not ", "endfor", "endif", " if ", ",", ".", "\\", "loop", "~", "**", "{% endmacro %}",
      "\xff", " * 99999999", " ~ messages|tojson ~ ", "{% for i in range(999999) %}",
      "{% set ns = namespace(s='x') %}", "{% set ns.s = ns.s ~ ns.s %}", "loop(", " recursive",
      "{% macro m(x) %}{{ m(x) }}{% endmacro %}{{ m(1) }}", "|join(messages|string)"};
  const ordered_json context = {
      {"messages",
       {{{"role", "system"}, {"content", "s"}},
        {{"role", "user"}, {"content", "u"}},
        {{"role", "assistant"},
         {"content", "<think>r</think>a"},
         {"tool_calls", {{{"function", {{"name", "f"}, {"arguments", {{"k", 1}}}}}}}}},
        {{"role", "tool"}, {"content", "t"}}}},
      {"tools", {{{"type", "function"}, {"function", {{"name", "f"}}}}}},
      {"add_generation_prompt", true}};
  std::mt19937 rng(1234);
  int parsed = 0;
  int rendered = 0;
  int total = 0;
  const std::vector<std::string> seeds = FuzzSeeds();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(
                                                               FuzzSeconds());
  while (total < 120 * static_cast<int>(seeds.size()) ||
         std::chrono::steady_clock::now() < deadline) {
    const std::string& seed = seeds[rng() % seeds.size()];
    {
      std::string s = seed;
      const int edits = 1 + static_cast<int>(rng() % 4);
      for (int e = 0; e < edits && !s.empty(); ++e) {
        const size_t pos = rng() % s.size();
        const size_t len = std::min<size_t>(1 + rng() % 12, s.size() - pos);
        switch (rng() % 3) {
          case 0: s.erase(pos, len); break;
          case 1: s.insert(pos, kFragments[rng() % std::size(kFragments)]); break;
          default: s.insert(pos, s.substr(rng() % s.size(), len)); break;
        }
      }
      ++total;
      auto tmpl = Template::Parse(s);
      if (!tmpl.ok()) {
        EXPECT_FALSE(tmpl.status().message().empty());
        continue;
      }
      ++parsed;
      auto out = tmpl->Render(context);
      rendered += out.ok();
    }
  }
  std::printf("%d mutated templates: %d parsed, %d rendered\n", total, parsed, rendered);
  EXPECT_GT(parsed, 0);
  EXPECT_GT(rendered, 0);
}

}  // namespace
}  // namespace ds::text::jinja
