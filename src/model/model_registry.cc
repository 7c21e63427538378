#include "model/architectures.h"
#include "model/model.h"

namespace ds::model {
namespace {

enum class Family { kDense, kQwenHybrid, kUnsupported };

Family FamilyOf(const std::string& arch) {
  if (arch == "llama" || arch == "qwen2" || arch == "qwen3") return Family::kDense;
  if (arch == "qwen35" || arch == "qwen35moe" || arch == "qwen3next") return Family::kQwenHybrid;
  return Family::kUnsupported;
}

}  // namespace

StatusOr<std::unique_ptr<Model>> Model::Load(gguf::File& file) {
  DS_ASSIGN_OR_RETURN(std::string arch, file.GetString("general.architecture"));
  Family family = FamilyOf(arch);
  if (family == Family::kUnsupported) {
    return UnimplementedError(file.display_name() + ": unsupported architecture '" + arch +
                              "' (supported: llama, qwen2, qwen3, qwen35, qwen35moe, qwen3next)");
  }
  DS_ASSIGN_OR_RETURN(HParams hp, ReadHParams(file));
  if (family == Family::kDense) return LoadDenseTransformer(file, std::move(hp));
  return LoadQwenHybrid(file, std::move(hp));
}

}  // namespace ds::model
