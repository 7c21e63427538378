// Fields the user adds to every request body (--extra-body, --extra-body-file): logit_bias, a
// server's own sampling options, anything the benchmark does not send itself. They are merged as
// an RFC 7386 merge patch: objects merge key by key (deep), any other value replaces the body's,
// and null removes a field (e.g. ignore_eos, for a server that refuses it).
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "bench/target.h"

namespace ds::bench {

// The JSON object in `text`. `source` names where it came from in errors ("--extra-body").
// Invalid JSON, anything but an object, and a change to "stream" (the benchmark measures streams
// only) are InvalidArgument errors.
StatusOr<Json> ParseExtraBody(std::string_view text, const std::string& source);

// `body` with `extra` merged in; `extra` null leaves it as it is.
Json WithExtraBody(Json body, const Json& extra);

}  // namespace ds::bench
