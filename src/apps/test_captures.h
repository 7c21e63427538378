// Test support: the request bodies real agent clients sent and the real chat templates, from
// ../shared/testdata.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ds::apps {

// DS_SHARED_DIR, else ../shared.
std::string SharedDir();

struct Capture {
  std::string name;  // "<client run>/<file>"
  std::string url;
  nlohmann::json body;
};

// A chat template of ../shared/testdata/templates by name ("Qwen3.5-4B"); empty when absent.
std::string SharedTemplate(const std::string& name);

// Every captured POST, sorted by name; empty when the captures are absent.
std::vector<Capture> LoadCaptures();

}  // namespace ds::apps
