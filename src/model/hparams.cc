#include "model/hparams.h"

namespace ds::model {
namespace {

// Reads `prefix.key` into *out when present; a present key of the wrong type is an error.
Status ReadOptionalInt(const gguf::File& file, const std::string& key, int64_t* out) {
  if (file.Find(key) == nullptr) return OkStatus();
  DS_ASSIGN_OR_RETURN(int64_t value, file.GetInt(key));
  if (value < 0) return InvalidArgumentError(key + " is negative");
  *out = value;
  return OkStatus();
}

Status ReadRequiredInt(const gguf::File& file, const std::string& key, int64_t* out) {
  if (file.Find(key) == nullptr) {
    return InvalidArgumentError(file.display_name() + ": missing required key " + key);
  }
  DS_RETURN_IF_ERROR(ReadOptionalInt(file, key, out));
  if (*out <= 0) return InvalidArgumentError(key + " must be positive");
  return OkStatus();
}

Status ReadOptionalFloat(const gguf::File& file, const std::string& key, float* out) {
  if (file.Find(key) == nullptr) return OkStatus();
  DS_ASSIGN_OR_RETURN(double value, file.GetFloat(key));
  *out = static_cast<float>(value);
  return OkStatus();
}

Status ReadRecurrentLayers(const gguf::File& file, const std::string& key, HParams* hp) {
  if (file.Find(key) == nullptr) return OkStatus();
  DS_ASSIGN_OR_RETURN(const gguf::Array* array, file.GetArray(key));
  // One entry per block, MTP layers included, as llama.cpp reads it; the trunk's alone is taken
  // too.
  const int64_t entries = static_cast<int64_t>(array->items.size());
  if (entries != hp->n_layer && entries != hp->n_layer + hp->n_nextn) {
    return InvalidArgumentError(key + " has " + std::to_string(entries) + " entries for " +
                                std::to_string(hp->n_layer + hp->n_nextn) + " layers");
  }
  hp->recurrent_layers.clear();
  for (const gguf::Value& item : array->items) {
    const bool* flag = std::get_if<bool>(&item.data);
    if (flag == nullptr) return InvalidArgumentError(key + " must hold booleans");
    hp->recurrent_layers.push_back(*flag);
  }
  hp->recurrent_layers.resize(hp->n_layer);
  return OkStatus();
}

}  // namespace

StatusOr<HParams> ReadHParams(const gguf::File& file) {
  HParams hp;
  DS_ASSIGN_OR_RETURN(hp.arch, file.GetString("general.architecture"));
  const std::string p = hp.arch + ".";
  DS_RETURN_IF_ERROR(ReadRequiredInt(file, p + "embedding_length", &hp.n_embd));
  DS_RETURN_IF_ERROR(ReadRequiredInt(file, p + "block_count", &hp.n_layer));
  DS_RETURN_IF_ERROR(ReadOptionalInt(file, p + "nextn_predict_layers", &hp.n_nextn));
  if (hp.n_nextn >= hp.n_layer) {
    return InvalidArgumentError(p + "nextn_predict_layers (" + std::to_string(hp.n_nextn) +
                                ") leaves no trunk layers of block_count " +
                                std::to_string(hp.n_layer));
  }
  hp.n_layer -= hp.n_nextn;
  DS_RETURN_IF_ERROR(ReadRequiredInt(file, p + "attention.head_count", &hp.n_head));
  hp.n_head_kv = hp.n_head;
  DS_RETURN_IF_ERROR(ReadOptionalInt(file, p + "attention.head_count_kv", &hp.n_head_kv));
  DS_RETURN_IF_ERROR(ReadOptionalInt(file, p + "context_length", &hp.n_ctx_train));
  DS_RETURN_IF_ERROR(ReadOptionalInt(file, p + "feed_forward_length", &hp.n_ff));
  hp.head_dim = hp.n_embd / hp.n_head;
  DS_RETURN_IF_ERROR(ReadOptionalInt(file, p + "attention.key_length", &hp.head_dim));
  hp.n_rot = hp.head_dim;
  DS_RETURN_IF_ERROR(ReadOptionalInt(file, p + "rope.dimension_count", &hp.n_rot));
  DS_RETURN_IF_ERROR(ReadOptionalFloat(file, p + "attention.layer_norm_rms_epsilon", &hp.rms_eps));
  DS_RETURN_IF_ERROR(ReadOptionalFloat(file, p + "rope.freq_base", &hp.rope_freq_base));

  DS_RETURN_IF_ERROR(ReadOptionalInt(file, p + "full_attention_interval",
                                     &hp.full_attention_interval));
  DS_RETURN_IF_ERROR(ReadRecurrentLayers(file, p + "attention.recurrent_layers", &hp));
  DS_RETURN_IF_ERROR(ReadOptionalInt(file, p + "ssm.conv_kernel", &hp.ssm_conv_kernel));
  DS_RETURN_IF_ERROR(ReadOptionalInt(file, p + "ssm.state_size", &hp.ssm_state_size));
  DS_RETURN_IF_ERROR(ReadOptionalInt(file, p + "ssm.group_count", &hp.ssm_group_count));
  DS_RETURN_IF_ERROR(ReadOptionalInt(file, p + "ssm.time_step_rank", &hp.ssm_time_step_rank));
  DS_RETURN_IF_ERROR(ReadOptionalInt(file, p + "ssm.inner_size", &hp.ssm_inner_size));
  DS_RETURN_IF_ERROR(ReadOptionalInt(file, p + "expert_count", &hp.n_expert));
  DS_RETURN_IF_ERROR(ReadOptionalInt(file, p + "expert_used_count", &hp.n_expert_used));
  DS_RETURN_IF_ERROR(ReadOptionalInt(file, p + "expert_feed_forward_length", &hp.n_ff_expert));
  DS_RETURN_IF_ERROR(ReadOptionalInt(file, p + "expert_shared_feed_forward_length",
                                     &hp.n_ff_shared_expert));

  if (hp.n_head_kv <= 0 || hp.n_head % hp.n_head_kv != 0) {
    return InvalidArgumentError("attention.head_count " + std::to_string(hp.n_head) +
                                " is not a multiple of head_count_kv " +
                                std::to_string(hp.n_head_kv));
  }
  if (hp.n_rot <= 0 || hp.n_rot > hp.head_dim || hp.n_rot % 2 != 0) {
    return InvalidArgumentError("rope.dimension_count " + std::to_string(hp.n_rot) +
                                " must be even and at most the head dim " +
                                std::to_string(hp.head_dim));
  }
  DS_ASSIGN_OR_RETURN(const gguf::Array* tokens, file.GetArray("tokenizer.ggml.tokens"));
  hp.n_vocab = static_cast<int64_t>(tokens->items.size());
  if (hp.n_vocab == 0) return InvalidArgumentError("tokenizer.ggml.tokens is empty");
  return hp;
}

}  // namespace ds::model
