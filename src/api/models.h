// GET /v1/models for OpenAI and Anthropic clients alike: {"object": "list", "data": [...],
// "has_more": false, "first_id", "last_id"}, each model {id, object: "model", created,
// owned_by: "deltaserve", type: "model", display_name, created_at (RFC 3339)}; the loaded
// model first, then its aliases.
// Thread safety: stateless function.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "api/types.h"

namespace ds::api {

// `created`: Unix seconds.
Json ModelsList(const std::string& id, const std::vector<std::string>& aliases, int64_t created);

}  // namespace ds::api
