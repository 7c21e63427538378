#include "apps/test_captures.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "base/file_text.h"

namespace ds::apps {

std::string SharedDir() {
  const char* env = std::getenv("DS_SHARED_DIR");
  return env != nullptr ? env : "../shared";
}

std::string SharedTemplate(const std::string& name) {
  StatusOr<std::string> text = ReadFileText(SharedDir() + "/testdata/templates/" + name + ".jinja");
  return text.ok() ? *text : "";
}

std::vector<Capture> LoadCaptures() {
  std::vector<Capture> captures;
  std::filesystem::path dir = SharedDir() + "/testdata/captures";
  if (!std::filesystem::exists(dir)) return captures;
  for (const auto& run : std::filesystem::directory_iterator(dir)) {
    for (const auto& file : std::filesystem::directory_iterator(run.path())) {
      StatusOr<std::string> text = ReadFileText(file.path().string());
      if (!text.ok()) continue;
      nlohmann::json capture = nlohmann::json::parse(*text, nullptr, false);
      if (capture.is_discarded() || capture["method"] != "POST") continue;
      captures.push_back({run.path().filename().string() + "/" + file.path().filename().string(),
                          capture["url"], capture["body"]});
    }
  }
  std::sort(captures.begin(), captures.end(),
            [](const Capture& a, const Capture& b) { return a.name < b.name; });
  return captures;
}

}  // namespace ds::apps
