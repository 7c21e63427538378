#include "apps/make_model.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "apps/random_weights.h"

namespace ds::apps {
namespace {

bool IsHybrid(const std::string& arch) {
  return arch == "qwen35" || arch == "qwen35moe" || arch == "qwen3next";
}
bool HasMoe(const std::string& arch) { return arch == "qwen35moe" || arch == "qwen3next"; }

Status ValidateConfig(const ModelConfig& c) {
  static const char* kArchs[] = {"llama", "qwen2", "qwen3", "qwen35", "qwen35moe", "qwen3next"};
  bool known = false;
  for (const char* a : kArchs) known = known || c.arch == a;
  if (!known) {
    return InvalidArgumentError("unsupported architecture '" + c.arch +
                                "' (supported: llama, qwen2, qwen3, qwen35, qwen35moe, qwen3next)");
  }
  if (c.n_embd <= 0 || c.n_layer <= 0 || c.n_head <= 0 || c.n_head_kv <= 0 || c.head_dim <= 0 ||
      c.n_ctx <= 0) {
    return InvalidArgumentError("dimensions, layer and head counts must be positive");
  }
  if (c.n_head % c.n_head_kv != 0) {
    return InvalidArgumentError("n_head must be a multiple of n_head_kv");
  }
  if (!tensor::Traits(c.dtype).is_weight_type) {
    return InvalidArgumentError("dtype " + std::string(tensor::DTypeName(c.dtype)) +
                                " cannot hold weights");
  }
  if (IsHybrid(c.arch) &&
      (c.full_attention_interval <= 0 || c.ssm_group_count <= 0 || c.ssm_time_step_rank <= 0 ||
       c.ssm_time_step_rank % c.ssm_group_count != 0 || c.ssm_state_size <= 0)) {
    return InvalidArgumentError(
        "hybrid models need positive ssm sizes with ssm_time_step_rank (Hv) a multiple of "
        "ssm_group_count (Hk)");
  }
  if (HasMoe(c.arch) && (c.n_expert <= 0 || c.n_expert_used <= 0 || c.n_expert_used > c.n_expert)) {
    return InvalidArgumentError("MoE models need 0 < n_expert_used <= n_expert");
  }
  if (c.n_mtp < 0 || (c.n_mtp > 0 && !IsHybrid(c.arch))) {
    return InvalidArgumentError("n_mtp (MTP blocks) is for hybrid architectures, at least 0");
  }
  if (c.fuse_gate_up_exps && !HasMoe(c.arch)) {
    return InvalidArgumentError("fuse_gate_up_exps is for MoE architectures");
  }
  return OkStatus();
}

int64_t RotaryDims(const ModelConfig& c) {
  if (c.n_rot > 0) return c.n_rot;
  return IsHybrid(c.arch) ? c.head_dim / 4 : c.head_dim;
}

// llama.cpp's llama_ftype for a file whose matrices are mostly `dtype` (general.file_type).
uint32_t FileType(tensor::DType dtype) {
  switch (dtype) {
    case tensor::DType::kF32: return 0;
    case tensor::DType::kF16: return 1;
    case tensor::DType::kQ4_0: return 2;
    case tensor::DType::kQ4_1: return 3;
    case tensor::DType::kQ8_0: return 7;
    case tensor::DType::kQ5_0: return 8;
    case tensor::DType::kQ5_1: return 9;
    case tensor::DType::kQ2_K: return 10;
    case tensor::DType::kQ3_K: return 12;  // Q3_K_M
    case tensor::DType::kQ4_K: return 15;  // Q4_K_M
    case tensor::DType::kQ5_K: return 17;  // Q5_K_M
    case tensor::DType::kQ6_K: return 18;
    case tensor::DType::kBF16: return 32;
    default: return 0;
  }
}

void WriteHParams(const ModelConfig& c, gguf::Writer* w) {
  const std::string p = c.arch + ".";
  auto u32 = [](int64_t v) { return gguf::Value::U32(static_cast<uint32_t>(v)); };
  w->Set("general.architecture", gguf::Value::Str(c.arch));
  w->Set("general.name", gguf::Value::Str(c.name));
  w->Set("general.file_type", gguf::Value::U32(FileType(c.dtype)));
  w->Set(p + "context_length", u32(c.n_ctx));
  w->Set(p + "embedding_length", u32(c.n_embd));
  w->Set(p + "block_count", u32(c.n_layer + c.n_mtp));
  if (c.n_mtp > 0) w->Set(p + "nextn_predict_layers", u32(c.n_mtp));
  if (!HasMoe(c.arch)) w->Set(p + "feed_forward_length", u32(c.n_ff));
  w->Set(p + "attention.head_count", u32(c.n_head));
  w->Set(p + "attention.head_count_kv", u32(c.n_head_kv));
  w->Set(p + "attention.key_length", u32(c.head_dim));
  w->Set(p + "attention.value_length", u32(c.head_dim));
  w->Set(p + "rope.dimension_count", u32(RotaryDims(c)));
  w->Set(p + "rope.freq_base", gguf::Value::F32(c.rope_freq_base));
  w->Set(p + "attention.layer_norm_rms_epsilon", gguf::Value::F32(c.rms_eps));
  if (!IsHybrid(c.arch)) return;
  if (c.arch != "qwen3next") {
    // Text positions are equal in every section, so any split of n_rot/2 behaves alike.
    int64_t half = RotaryDims(c) / 2;
    int64_t s0 = (half * 3 + 7) / 8;
    w->Set(p + "rope.dimension_sections",
           gguf::Value::Arr(gguf::ValueType::kInt32,
                            {gguf::Value::I32(s0), gguf::Value::I32(s0),
                             gguf::Value::I32(half - 2 * s0), gguf::Value::I32(0)}));
  }
  if (HasMoe(c.arch)) {
    w->Set(p + "expert_count", u32(c.n_expert));
    w->Set(p + "expert_used_count", u32(c.n_expert_used));
    w->Set(p + "expert_feed_forward_length", u32(c.n_ff_expert));
    w->Set(p + "expert_shared_feed_forward_length", u32(c.n_ff_shared_expert));
  }
  w->Set(p + "ssm.conv_kernel", u32(c.ssm_conv_kernel));
  w->Set(p + "ssm.state_size", u32(c.ssm_state_size));
  w->Set(p + "ssm.group_count", u32(c.ssm_group_count));
  w->Set(p + "ssm.time_step_rank", u32(c.ssm_time_step_rank));
  w->Set(p + "ssm.inner_size", u32(c.ssm_state_size * c.ssm_time_step_rank));
  w->Set(p + "full_attention_interval", u32(c.full_attention_interval));
}

// Norm weights are stored as (1+w) by llama.cpp's converter; random w ~ N(0, 0.1^2).
void NormWeight(RandomWeights* r, const std::string& name, int64_t n) {
  r->Floats(name, {n}, 1.0f, 0.1f);
}

float InitScale(int64_t fan_in) { return 1.0f / std::sqrt(static_cast<float>(fan_in)); }

void WriteSwiGlu(RandomWeights* r, const std::string& p, const std::string& suffix,
                 int64_t n_embd, int64_t n_ff, std::vector<int64_t> extra) {
  auto dims = [&extra](int64_t a, int64_t b) {
    std::vector<int64_t> ne = {a, b};
    ne.insert(ne.end(), extra.begin(), extra.end());
    return ne;
  };
  r->Matrix(p + "ffn_gate" + suffix + ".weight", dims(n_embd, n_ff), InitScale(n_embd));
  r->Matrix(p + "ffn_up" + suffix + ".weight", dims(n_embd, n_ff), InitScale(n_embd));
  r->Matrix(p + "ffn_down" + suffix + ".weight", dims(n_ff, n_embd), InitScale(n_ff));
}

void WriteDenseLayer(const ModelConfig& c, const std::string& p, RandomWeights* r) {
  const int64_t q_dim = c.n_head * c.head_dim;
  const int64_t kv_dim = c.n_head_kv * c.head_dim;
  NormWeight(r, p + "attn_norm.weight", c.n_embd);
  r->Matrix(p + "attn_q.weight", {c.n_embd, q_dim}, InitScale(c.n_embd));
  r->Matrix(p + "attn_k.weight", {c.n_embd, kv_dim}, InitScale(c.n_embd));
  r->Matrix(p + "attn_v.weight", {c.n_embd, kv_dim}, InitScale(c.n_embd));
  if (c.arch == "qwen2") {
    r->Floats(p + "attn_q.bias", {q_dim}, 0.0f, 0.1f);
    r->Floats(p + "attn_k.bias", {kv_dim}, 0.0f, 0.1f);
    r->Floats(p + "attn_v.bias", {kv_dim}, 0.0f, 0.1f);
  }
  if (c.arch == "qwen3") {
    NormWeight(r, p + "attn_q_norm.weight", c.head_dim);
    NormWeight(r, p + "attn_k_norm.weight", c.head_dim);
  }
  r->Matrix(p + "attn_output.weight", {q_dim, c.n_embd}, InitScale(q_dim));
  NormWeight(r, p + "ffn_norm.weight", c.n_embd);
  WriteSwiGlu(r, p, "", c.n_embd, c.n_ff, {});
}

void WriteGatedAttention(const ModelConfig& c, const std::string& p, RandomWeights* r) {
  const int64_t q_dim = c.n_head * c.head_dim;
  const int64_t kv_dim = c.n_head_kv * c.head_dim;
  r->Matrix(p + "attn_q.weight", {c.n_embd, 2 * q_dim}, InitScale(c.n_embd));  // [q | gate]
  r->Matrix(p + "attn_k.weight", {c.n_embd, kv_dim}, InitScale(c.n_embd));
  r->Matrix(p + "attn_v.weight", {c.n_embd, kv_dim}, InitScale(c.n_embd));
  r->Matrix(p + "attn_output.weight", {q_dim, c.n_embd}, InitScale(q_dim));
  NormWeight(r, p + "attn_q_norm.weight", c.head_dim);
  NormWeight(r, p + "attn_k_norm.weight", c.head_dim);
}

void WriteDeltaNet(const ModelConfig& c, const std::string& p, RandomWeights* r) {
  const int64_t key_dim = c.ssm_state_size * c.ssm_group_count;
  const int64_t value_dim = c.ssm_state_size * c.ssm_time_step_rank;
  const int64_t conv_dim = 2 * key_dim + value_dim;
  const int64_t hv = c.ssm_time_step_rank;
  r->Matrix(p + "attn_qkv.weight", {c.n_embd, conv_dim}, InitScale(c.n_embd));
  r->Matrix(p + "attn_gate.weight", {c.n_embd, value_dim}, InitScale(c.n_embd));
  r->Floats(p + "ssm_conv1d.weight", {c.ssm_conv_kernel, conv_dim}, 0.0f, 0.5f);
  r->Floats(p + "ssm_dt.bias", {hv}, 0.0f, 0.5f);
  // ssm_a = -exp(A_log) with A_log ~ U(log 1, log 16), as the reference initialiser draws A.
  r->Uniform(p + "ssm_a", {hv}, -16.0f, -1.0f);
  if (c.arch == "qwen3next") {
    r->Matrix(p + "ssm_ba.weight", {c.n_embd, 2 * hv}, InitScale(c.n_embd));
  } else {
    r->Matrix(p + "ssm_beta.weight", {c.n_embd, hv}, InitScale(c.n_embd));
    r->Matrix(p + "ssm_alpha.weight", {c.n_embd, hv}, InitScale(c.n_embd));
  }
  r->Floats(p + "ssm_norm.weight", {c.ssm_state_size}, 1.0f, 0.1f);  // stored raw
  r->Matrix(p + "ssm_out.weight", {value_dim, c.n_embd}, InitScale(value_dim));
}

void WriteHybridFfn(const ModelConfig& c, const std::string& p, RandomWeights* r) {
  if (!HasMoe(c.arch)) {
    WriteSwiGlu(r, p, "", c.n_embd, c.n_ff, {});
    return;
  }
  r->Matrix(p + "ffn_gate_inp.weight", {c.n_embd, c.n_expert}, InitScale(c.n_embd));
  if (c.fuse_gate_up_exps) {
    r->FusedMatrices(p + "ffn_gate_up_exps.weight",
                     {p + "ffn_gate_exps.weight", p + "ffn_up_exps.weight"}, c.n_embd,
                     c.n_ff_expert, c.n_expert, InitScale(c.n_embd));
    r->Matrix(p + "ffn_down_exps.weight", {c.n_ff_expert, c.n_embd, c.n_expert},
              InitScale(c.n_ff_expert));
  } else {
    WriteSwiGlu(r, p, "_exps", c.n_embd, c.n_ff_expert, {c.n_expert});
  }
  r->Floats(p + "ffn_gate_inp_shexp.weight", {c.n_embd}, 0.0f, InitScale(c.n_embd));
  WriteSwiGlu(r, p, "_shexp", c.n_embd, c.n_ff_shared_expert, {});
}

void WriteHybridLayer(const ModelConfig& c, int64_t layer, const std::string& p,
                      RandomWeights* r) {
  NormWeight(r, p + "attn_norm.weight", c.n_embd);
  NormWeight(r, p + "post_attention_norm.weight", c.n_embd);
  bool full_attention = (layer + 1) % c.full_attention_interval == 0;
  if (full_attention) {
    WriteGatedAttention(c, p, r);
  } else {
    WriteDeltaNet(c, p, r);
  }
  WriteHybridFfn(c, p, r);
}

}  // namespace

void WriteMtpBlock(const ModelConfig& c, int64_t n_vocab, int64_t block, RandomWeights* r) {
  const std::string p = "blk." + std::to_string(block) + ".";
  NormWeight(r, p + "attn_norm.weight", c.n_embd);
  NormWeight(r, p + "post_attention_norm.weight", c.n_embd);
  WriteGatedAttention(c, p, r);
  WriteHybridFfn(c, p, r);
  r->Matrix(p + "nextn.eh_proj.weight", {2 * c.n_embd, c.n_embd}, InitScale(2 * c.n_embd));
  NormWeight(r, p + "nextn.enorm.weight", c.n_embd);
  NormWeight(r, p + "nextn.hnorm.weight", c.n_embd);
  NormWeight(r, p + "nextn.shared_head_norm.weight", c.n_embd);
  if (c.mtp_own_head) {
    r->Matrix(p + "nextn.embed_tokens.weight", {c.n_embd, n_vocab}, 1.0f);
    r->Matrix(p + "nextn.shared_head_head.weight", {c.n_embd, n_vocab}, InitScale(c.n_embd));
  }
}

Status ApplyConfigJson(const std::string& json_text, ModelConfig* config) {
  nlohmann::json json = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return InvalidArgumentError("model config is not a JSON object");
  }
  for (const auto& [key, value] : json.items()) {
    auto set_int = [&](int64_t* field) -> Status {
      if (!value.is_number_integer()) return InvalidArgumentError(key + " must be an integer");
      *field = value.get<int64_t>();
      return OkStatus();
    };
    auto set_float = [&](float* field) -> Status {
      if (!value.is_number()) return InvalidArgumentError(key + " must be a number");
      *field = value.get<float>();
      return OkStatus();
    };
    const std::map<std::string, int64_t*> ints = {
        {"n_embd", &config->n_embd},
        {"n_layer", &config->n_layer},
        {"n_head", &config->n_head},
        {"n_head_kv", &config->n_head_kv},
        {"head_dim", &config->head_dim},
        {"n_rot", &config->n_rot},
        {"n_ff", &config->n_ff},
        {"n_ctx", &config->n_ctx},
        {"full_attention_interval", &config->full_attention_interval},
        {"ssm_conv_kernel", &config->ssm_conv_kernel},
        {"ssm_state_size", &config->ssm_state_size},
        {"ssm_group_count", &config->ssm_group_count},
        {"ssm_time_step_rank", &config->ssm_time_step_rank},
        {"n_expert", &config->n_expert},
        {"n_expert_used", &config->n_expert_used},
        {"n_ff_expert", &config->n_ff_expert},
        {"n_ff_shared_expert", &config->n_ff_shared_expert},
        {"n_mtp", &config->n_mtp},
    };
    const std::map<std::string, bool*> flags = {
        {"tied_output", &config->tied_output},
        {"mtp_own_head", &config->mtp_own_head},
        {"fuse_gate_up_exps", &config->fuse_gate_up_exps},
    };
    if (auto it = ints.find(key); it != ints.end()) {
      DS_RETURN_IF_ERROR(set_int(it->second));
    } else if (key == "rope_freq_base") {
      DS_RETURN_IF_ERROR(set_float(&config->rope_freq_base));
    } else if (key == "rms_eps") {
      DS_RETURN_IF_ERROR(set_float(&config->rms_eps));
    } else if (key == "seed") {
      if (!value.is_number_unsigned()) return InvalidArgumentError("seed must be an integer");
      config->seed = value.get<uint64_t>();
    } else if (auto flag = flags.find(key); flag != flags.end()) {
      if (!value.is_boolean()) return InvalidArgumentError(key + " must be a boolean");
      *flag->second = value.get<bool>();
    } else if (key == "arch" || key == "name" || key == "dtype") {
      if (!value.is_string()) return InvalidArgumentError(key + " must be a string");
      std::string text = value.get<std::string>();
      if (key == "arch") config->arch = text;
      if (key == "name") config->name = text;
      if (key == "dtype") {
        std::optional<tensor::DType> dtype = tensor::ParseDType(text);
        if (!dtype) return InvalidArgumentError("unknown dtype '" + text + "'");
        config->dtype = *dtype;
      }
    } else {
      return InvalidArgumentError("unknown model config key '" + key + "'");
    }
  }
  return OkStatus();
}

StatusOr<gguf::Writer> MakeModel(const ModelConfig& config, const text::Vocab& vocab) {
  DS_RETURN_IF_ERROR(ValidateConfig(config));
  gguf::Writer writer;
  WriteHParams(config, &writer);
  text::WriteVocab(vocab, &writer);
  const int64_t n_vocab = static_cast<int64_t>(vocab.tokens.size());

  RandomWeights random(&writer, config.dtype, config.seed);
  random.Matrix("token_embd.weight", {config.n_embd, n_vocab}, 1.0f);
  NormWeight(&random, "output_norm.weight", config.n_embd);
  if (!config.tied_output) {
    random.Matrix("output.weight", {config.n_embd, n_vocab}, InitScale(config.n_embd));
  }
  for (int64_t i = 0; i < config.n_layer; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    if (IsHybrid(config.arch)) {
      WriteHybridLayer(config, i, p, &random);
    } else {
      WriteDenseLayer(config, p, &random);
    }
  }
  for (int64_t i = 0; i < config.n_mtp; ++i) {
    WriteMtpBlock(config, n_vocab, config.n_layer + i, &random);
  }
  return writer;
}

}  // namespace ds::apps
