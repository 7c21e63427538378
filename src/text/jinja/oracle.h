// Test helper: renders templates with python3-jinja2 configured exactly like Hugging Face's
// apply_chat_template (transformers/utils/chat_template_utils.py: ImmutableSandboxedEnvironment
// with trim_blocks=True, lstrip_blocks=True, jinja2.ext.loopcontrols, a tojson filter that is
// json.dumps with ensure_ascii=False, raise_exception and strftime_now globals), as the reference
// the C++ engine must match byte for byte. Used by tests only; never linked into the server.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ds::text::jinja::testing {

// True when `python3 -c 'import jinja2'` succeeds.
bool PythonJinjaAvailable();

struct OracleResult {
  bool ok = false;
  std::string output;  // the rendering, or the Python exception text when !ok
};

struct OracleJob {
  std::string source;
  std::vector<nlohmann::ordered_json> contexts;
};

// Renders every job's template once per context, all in one python3 process (one result list per
// job). Empty optional when Python itself could not run.
std::optional<std::vector<std::vector<OracleResult>>> RenderWithPython(
    const std::vector<OracleJob>& jobs);

// Compares the C++ engine with the oracle over `contexts`; returns a description of the first
// few mismatches, or an empty string when every context matches (same output, or both fail).
std::string CompareWithOracle(const std::string& source,
                              const std::vector<nlohmann::ordered_json>& contexts,
                              const std::vector<OracleResult>& expected);

}  // namespace ds::text::jinja::testing
