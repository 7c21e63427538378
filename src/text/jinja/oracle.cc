#include "text/jinja/oracle.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "base/file_text.h"
#include "text/jinja/jinja.h"

namespace ds::text::jinja::testing {
namespace {

// The environment mirrors transformers' _compile_jinja_template (the AssistantTracker extension
// only adds {% generation %}, which renders its body unchanged).
constexpr const char* kOracleScript = R"PY(
import json, sys
from datetime import datetime
import jinja2, jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)

def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)

def strftime_now(format):
    return datetime.now().strftime(format)

env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                    extensions=[jinja2.ext.loopcontrols])
env.filters["tojson"] = tojson
env.globals["raise_exception"] = raise_exception
env.globals["strftime_now"] = strftime_now

def run(job):
    results = []
    try:
        template = env.from_string(job["template"])
    except Exception as e:
        return [{"ok": False, "output": "%s: %s" % (type(e).__name__, e)}] * len(job["contexts"])
    for context in job["contexts"]:
        try:
            results.append({"ok": True, "output": template.render(**context)})
        except Exception as e:
            results.append({"ok": False, "output": "%s: %s" % (type(e).__name__, e)})
    return results

with open(sys.argv[1], encoding="utf-8") as f:
    jobs = json.load(f)
with open(sys.argv[2], "w", encoding="utf-8") as f:
    json.dump([run(job) for job in jobs], f, ensure_ascii=True)
)PY";

std::string TempPath(const std::string& suffix) {
  static int counter = 0;
  return "/tmp/ds_jinja_oracle_" + std::to_string(getpid()) + "_" + std::to_string(counter++) +
         suffix;
}

std::string Escaped(const std::string& s) {
  const nlohmann::json j = s;
  std::string out = j.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
  return out.size() > 600 ? out.substr(0, 600) + "..." : out;
}

}  // namespace

bool PythonJinjaAvailable() {
  return std::system("python3 -c 'import jinja2' >/dev/null 2>&1") == 0;
}

std::optional<std::vector<std::vector<OracleResult>>> RenderWithPython(
    const std::vector<OracleJob>& jobs) {
  const std::string script = TempPath(".py");
  const std::string input = TempPath(".in.json");
  const std::string output = TempPath(".out.json");
  std::ofstream(script) << kOracleScript;
  nlohmann::ordered_json request = nlohmann::ordered_json::array();
  for (const OracleJob& job : jobs) {
    request.push_back({{"template", job.source}, {"contexts", job.contexts}});
  }
  std::ofstream(input) << request.dump();
  const std::string command = "python3 " + script + " " + input + " " + output;
  const int rc = std::system(command.c_str());
  std::optional<std::vector<std::vector<OracleResult>>> results;
  const StatusOr<std::string> text = ReadFileText(output);
  if (rc == 0 && text.ok()) {
    const nlohmann::json parsed = nlohmann::json::parse(*text, nullptr, false);
    if (parsed.is_array() && parsed.size() == jobs.size()) {
      results.emplace();
      for (size_t j = 0; j < jobs.size(); ++j) {
        std::vector<OracleResult>& out = results->emplace_back();
        for (const auto& r : parsed[j]) {
          out.push_back({r["ok"].get<bool>(), r["output"].get<std::string>()});
        }
        if (out.size() != jobs[j].contexts.size()) return std::nullopt;
      }
    }
  }
  std::remove(script.c_str());
  std::remove(input.c_str());
  std::remove(output.c_str());
  return results;
}

std::string CompareWithOracle(const std::string& source,
                              const std::vector<nlohmann::ordered_json>& contexts,
                              const std::vector<OracleResult>& expected) {
  std::string report;
  int mismatches = 0;
  StatusOr<Template> tmpl = Template::Parse(source);
  for (size_t i = 0; i < contexts.size() && i < expected.size(); ++i) {
    StatusOr<std::string> got =
        tmpl.ok() ? tmpl->Render(contexts[i]) : StatusOr<std::string>(tmpl.status());
    const OracleResult& want = expected[i];
    const bool same = got.ok() == want.ok && (!want.ok || *got == want.output);
    if (same) continue;
    if (++mismatches > 3) continue;
    report += "context #" + std::to_string(i) + ": " + contexts[i].dump().substr(0, 160) + "\n";
    report += "  python: " + std::string(want.ok ? "" : "[error] ") + Escaped(want.output) + "\n";
    report += "  c++:    " + (got.ok() ? Escaped(*got) : "[error] " + got.status().message()) +
              "\n";
  }
  if (mismatches > 0) {
    report = std::to_string(mismatches) + " of " + std::to_string(contexts.size()) +
             " contexts differ\n" + report;
  }
  return report;
}

}  // namespace ds::text::jinja::testing
