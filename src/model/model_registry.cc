#include "model/architectures.h"
#include "model/model.h"

namespace ds::model {

StatusOr<std::unique_ptr<Model>> Model::Load(const gguf::File& file) {
  DS_ASSIGN_OR_RETURN(HParams hp, ReadHParams(file));
  if (hp.arch == "llama" || hp.arch == "qwen2" || hp.arch == "qwen3") {
    return LoadDenseTransformer(file, std::move(hp));
  }
  if (hp.arch == "qwen35" || hp.arch == "qwen35moe" || hp.arch == "qwen3next") {
    return LoadQwenHybrid(file, std::move(hp));
  }
  return UnimplementedError(file.display_name() + ": unsupported architecture '" + hp.arch +
                            "' (supported: llama, qwen2, qwen3, qwen35, qwen35moe, qwen3next)");
}

}  // namespace ds::model
