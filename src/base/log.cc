#include "base/log.h"

namespace ds {

void SetLogLevel(const std::string& level_name) {
  spdlog::set_level(spdlog::level::from_str(level_name));
  spdlog::set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ %v");
}

}  // namespace ds
