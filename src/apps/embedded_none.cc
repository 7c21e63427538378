// The stage-0 binary, which generates the default model at build time, embeds none.
#include "apps/loaded_model.h"

namespace ds::apps {

std::span<const uint8_t> EmbeddedDefaultModel() { return {}; }

}  // namespace ds::apps
