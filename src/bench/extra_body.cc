#include "bench/extra_body.h"

#include "base/json_depth.h"

namespace ds::bench {

StatusOr<Json> ParseExtraBody(std::string_view text, const std::string& source) {
  if (!JsonDepthWithin(text)) {
    return InvalidArgumentError(source + ": nests deeper than " + std::to_string(kMaxJsonDepth) +
                                " levels");
  }
  Json extra;
  // The parser's own message says where and why; the library reports it by exception, which
  // stops here.
  try {
    extra = Json::parse(text);
  } catch (const Json::exception& e) {
    return InvalidArgumentError(source + ": not valid JSON: " + e.what());
  }
  if (!extra.is_object()) {
    return InvalidArgumentError(source + ": must be a JSON object, e.g. '{\"logit_bias\": "
                                "{\"42\": -100}}', not " + std::string(extra.type_name()));
  }
  if (extra.contains("stream")) {
    return InvalidArgumentError(source + ": cannot set \"stream\": the benchmark measures "
                                "streamed responses only");
  }
  return extra;
}

Json WithExtraBody(Json body, const Json& extra) {
  if (!extra.is_null()) body.merge_patch(extra);
  return body;
}

}  // namespace ds::bench
