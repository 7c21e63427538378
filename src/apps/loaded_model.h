// Opens a model for the commands: a GGUF path, or the default model embedded in the binary when
// the path is empty. Holds the file, the model and its tokenizer together, since the model and
// tokenizer view the file's bytes.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "base/status.h"
#include "gguf/gguf.h"
#include "model/model.h"
#include "text/tokenizer.h"

namespace ds::apps {

// The default model generated at build time; empty in the stage-0 binary that generates it.
std::span<const uint8_t> EmbeddedDefaultModel();

struct LoadedModel {
  std::unique_ptr<gguf::File> file;
  std::unique_ptr<model::Model> model;
  std::unique_ptr<text::Tokenizer> tokenizer;
};

// --mmap of the commands that load a model.
inline constexpr const char* kMmapHelp =
    "map the model file instead of reading it into memory on 2 MiB pages (opens without a copy; "
    "decodes slower)";

// Where the model's bytes are, for a command's report: "in memory on 2 MiB pages" or "mapped".
const char* WeightsResidencyText(const gguf::File& file);

StatusOr<LoadedModel> OpenModel(const std::string& path,
                                gguf::Residency residency = gguf::Residency::kHugePages);

}  // namespace ds::apps
