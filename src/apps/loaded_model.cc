#include "apps/loaded_model.h"

namespace ds::apps {

const char* WeightsResidencyText(const gguf::File& file) {
  return file.residency() == gguf::Residency::kHugePages ? "in memory on 2 MiB pages"
                                                         : "mapped from the file";
}

StatusOr<LoadedModel> OpenModel(const std::string& path, gguf::Residency residency) {
  LoadedModel loaded;
  if (path.empty()) {
    std::span<const uint8_t> bytes = EmbeddedDefaultModel();
    if (bytes.empty()) return NotFoundError("this binary has no embedded model; pass -m MODEL");
    DS_ASSIGN_OR_RETURN(loaded.file, gguf::File::FromBuffer(bytes, "<embedded default model>"));
  } else {
    DS_ASSIGN_OR_RETURN(loaded.file, gguf::File::Open(path, residency));
  }
  DS_ASSIGN_OR_RETURN(loaded.model, model::Model::Load(*loaded.file));
  DS_ASSIGN_OR_RETURN(text::Vocab vocab, text::LoadVocab(*loaded.file));
  DS_ASSIGN_OR_RETURN(loaded.tokenizer, text::Tokenizer::FromVocab(std::move(vocab)));
  return loaded;
}

}  // namespace ds::apps
