// Writes GGUF models with seeded random weights for every supported architecture, laid out with
// llama.cpp's key and tensor conventions so llama.cpp loads them too. Used for tests, benchmarks
// and the embedded default model.
// Thread safety: pure functions of their inputs.
#pragma once

#include <cstdint>
#include <string>

#include "apps/random_weights.h"
#include "base/status.h"
#include "gguf/gguf.h"
#include "tensor/dtype.h"
#include "text/vocab.h"

namespace ds::apps {

struct ModelConfig {
  std::string arch = "qwen3";
  std::string name = "deltaserve-random";
  int64_t n_embd = 256;
  int64_t n_layer = 4;
  int64_t n_head = 4;
  int64_t n_head_kv = 2;
  int64_t head_dim = 64;
  int64_t n_rot = 0;  // 0: head_dim for dense models, head_dim / 4 for hybrids
  int64_t n_ff = 512;
  int64_t n_ctx = 4096;
  float rope_freq_base = 1000000.0f;
  float rms_eps = 1e-6f;
  bool tied_output = false;
  tensor::DType dtype = tensor::DType::kF32;  // weight matrices; norms and biases stay f32
  uint64_t seed = 1;

  // Hybrid (qwen35, qwen35moe, qwen3next).
  int64_t full_attention_interval = 4;
  int64_t ssm_conv_kernel = 4;
  int64_t ssm_state_size = 32;  // dk = dv
  int64_t ssm_group_count = 2;  // Hk
  int64_t ssm_time_step_rank = 4;  // Hv
  int64_t n_expert = 8;
  int64_t n_expert_used = 2;
  int64_t n_ff_expert = 64;
  int64_t n_ff_shared_expert = 96;
  // Layouts of llama.cpp's converter for the hybrids: MTP ("nextn") blocks after the trunk
  // (block_count = n_layer + n_mtp), with their own embedding and head when mtp_own_head, and
  // each expert's gate and up rows fused into one ffn_gate_up_exps matrix. The trunk's weights
  // are the same whichever is chosen.
  int64_t n_mtp = 0;
  bool mtp_own_head = false;
  bool fuse_gate_up_exps = false;
};

// Sets the fields named in a JSON object (same names as ModelConfig, dtype as a string such as
// "q8_0"). Unknown keys and wrong types are errors naming the key.
Status ApplyConfigJson(const std::string& json_text, ModelConfig* config);

// Writes the MTP block numbered `block` (a full-attention layer and the nextn tensors that feed
// it) of a hybrid model shaped by `config`.
void WriteMtpBlock(const ModelConfig& config, int64_t n_vocab, int64_t block, RandomWeights* r);

// Builds the whole file: hyperparameters, tokenizer (from `vocab`) and random weights.
StatusOr<gguf::Writer> MakeModel(const ModelConfig& config, const text::Vocab& vocab);

}  // namespace ds::apps
