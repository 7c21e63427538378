#include "apps/published_layout.h"

#include <cstring>

#include "apps/make_model.h"
#include "apps/random_weights.h"
#include "model/hparams.h"

namespace ds::apps {
namespace {

gguf::Value U32(int64_t v) { return gguf::Value::U32(static_cast<uint32_t>(v)); }

std::vector<uint8_t> Bytes(const gguf::TensorInfo& t) {
  return std::vector<uint8_t>(t.data, t.data + t.size_bytes);
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Each expert's gate rows, then its up rows: the bytes of equal-sized matrices concatenated.
void AddFusedGateUp(const gguf::TensorInfo& gate, const gguf::TensorInfo& up,
                    gguf::Writer* writer) {
  const int64_t n_expert = gate.ne[2];
  const uint64_t per_expert = gate.size_bytes / n_expert;
  std::vector<uint8_t> fused;
  for (int64_t e = 0; e < n_expert; ++e) {
    fused.insert(fused.end(), gate.data + e * per_expert, gate.data + (e + 1) * per_expert);
    fused.insert(fused.end(), up.data + e * per_expert, up.data + (e + 1) * per_expert);
  }
  std::string name = gate.name;
  name.replace(name.size() - std::strlen("gate_exps.weight"), std::string::npos,
               "gate_up_exps.weight");
  writer->AddTensor(name, {gate.ne[0], 2 * gate.ne[1], n_expert}, gate.type, std::move(fused));
}

}  // namespace

StatusOr<gguf::Writer> Relayout(const gguf::File& source, const PublishedLayout& layout) {
  DS_ASSIGN_OR_RETURN(model::HParams hp, model::ReadHParams(source));
  const std::string p = hp.arch + ".";
  gguf::Writer writer;
  for (const auto& [key, value] : source.metadata()) writer.Set(key, value);
  const int64_t n_blocks = hp.n_layer + layout.n_mtp;
  writer.Set(p + "block_count", U32(n_blocks));
  if (layout.n_mtp > 0) writer.Set(p + "nextn_predict_layers", U32(layout.n_mtp));
  if (layout.recurrent_layers) {
    std::vector<gguf::Value> flags;
    for (int64_t i = 0; i < n_blocks; ++i) {
      flags.push_back(gguf::Value::Bool(i < hp.n_layer && (i + 1) % hp.full_attention_interval != 0));
    }
    writer.Set(p + "attention.recurrent_layers",
               gguf::Value::Arr(gguf::ValueType::kBool, std::move(flags)));
  }
  for (const gguf::TensorInfo& t : source.tensors()) {
    if (layout.fuse_gate_up_exps && EndsWith(t.name, "ffn_up_exps.weight")) continue;
    if (layout.fuse_gate_up_exps && EndsWith(t.name, "ffn_gate_exps.weight")) {
      std::string up = t.name;
      up.replace(up.size() - std::strlen("gate_exps.weight"), std::string::npos, "up_exps.weight");
      const gguf::TensorInfo* up_info = source.FindTensor(up);
      if (up_info == nullptr) return InvalidArgumentError("no " + up + " beside " + t.name);
      AddFusedGateUp(t, *up_info, &writer);
      continue;
    }
    writer.AddTensor(t.name, t.ne, t.type, Bytes(t));
  }
  if (layout.unknown_tensor) {
    std::vector<float> zeros(hp.n_embd, 0.0f);
    std::vector<uint8_t> bytes(zeros.size() * sizeof(float));
    writer.AddTensor("blk.0.future_norm.weight", {hp.n_embd}, tensor::DType::kF32,
                     std::move(bytes));
  }
  ModelConfig config;
  config.arch = hp.arch;
  config.n_embd = hp.n_embd;
  config.n_head = hp.n_head;
  config.n_head_kv = hp.n_head_kv;
  config.head_dim = hp.head_dim;
  config.n_ff = hp.n_ff;
  config.n_expert = hp.n_expert;
  config.n_expert_used = hp.n_expert_used;
  config.n_ff_expert = hp.n_ff_expert;
  config.n_ff_shared_expert = hp.n_ff_shared_expert;
  config.mtp_own_head = layout.mtp_own_head;
  config.fuse_gate_up_exps = layout.fuse_gate_up_exps;
  RandomWeights random(&writer, tensor::DType::kF32, /*seed=*/7);
  for (int64_t i = 0; i < layout.n_mtp; ++i) {
    WriteMtpBlock(config, hp.n_vocab, hp.n_layer + i, &random);
  }
  return writer;
}

}  // namespace ds::apps
