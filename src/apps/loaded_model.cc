#include "apps/loaded_model.h"

namespace ds::apps {

StatusOr<LoadedModel> OpenModel(const std::string& path) {
  LoadedModel loaded;
  if (path.empty()) {
    std::span<const uint8_t> bytes = EmbeddedDefaultModel();
    if (bytes.empty()) return NotFoundError("this binary has no embedded model; pass -m MODEL");
    DS_ASSIGN_OR_RETURN(loaded.file, gguf::File::FromBuffer(bytes, "<embedded default model>"));
  } else {
    DS_ASSIGN_OR_RETURN(loaded.file, gguf::File::Open(path));
  }
  DS_ASSIGN_OR_RETURN(loaded.model, model::Model::Load(*loaded.file));
  DS_ASSIGN_OR_RETURN(text::Vocab vocab, text::LoadVocab(*loaded.file));
  DS_ASSIGN_OR_RETURN(loaded.tokenizer, text::Tokenizer::FromVocab(std::move(vocab)));
  return loaded;
}

}  // namespace ds::apps
