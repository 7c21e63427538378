#include "api/models.h"

#include <ctime>

namespace ds::api {
namespace {

std::string Rfc3339(int64_t unix_s) {
  std::time_t t = static_cast<std::time_t>(unix_s);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

Json ModelsList(const std::string& id, const std::vector<std::string>& aliases, int64_t created) {
  Json data = Json::array();
  std::vector<std::string> names{id};
  names.insert(names.end(), aliases.begin(), aliases.end());
  for (const std::string& name : names) {
    data.push_back(Json{{"id", name},
                        {"object", "model"},
                        {"created", created},
                        {"owned_by", "deltaserve"},
                        {"type", "model"},
                        {"display_name", name},
                        {"created_at", Rfc3339(created)}});
  }
  return Json{{"object", "list"},
              {"data", std::move(data)},
              {"has_more", false},
              {"first_id", names.front()},
              {"last_id", names.back()}};
}

}  // namespace ds::api
