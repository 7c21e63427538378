// A whole file's bytes, for the small files the program reads at once (configs, tokenizer JSON,
// /proc tables).
// Thread safety: a pure read; safe from any thread.
#pragma once

#include <string>

#include "base/status.h"

namespace ds {

// The file's bytes as they are; NotFoundError("<path>: cannot open") when it cannot be opened.
StatusOr<std::string> ReadFileText(const std::string& path);

}  // namespace ds
