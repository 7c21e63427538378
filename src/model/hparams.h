// Hyperparameters read from GGUF metadata (keys prefixed with the architecture name, as
// llama.cpp writes them). Only generic parsing lives here; each architecture file validates the
// fields it needs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "gguf/gguf.h"

namespace ds::model {

struct HParams {
  std::string arch;  // general.architecture
  int64_t n_vocab = 0;
  int64_t n_ctx_train = 0;
  int64_t n_embd = 0;
  int64_t n_layer = 0;  // the trunk: block_count less the MTP layers
  // MTP ("nextn") layers that llama.cpp's converter appends after the trunk
  // (nextn_predict_layers); they draft tokens and never take part in the trunk's forward pass.
  int64_t n_nextn = 0;
  int64_t n_ff = 0;           // dense FFN width (0 when absent)
  int64_t n_head = 0;
  int64_t n_head_kv = 0;
  int64_t head_dim = 0;       // attention.key_length, else n_embd / n_head
  int64_t n_rot = 0;          // rope.dimension_count, else head_dim
  float rms_eps = 1e-6f;
  float rope_freq_base = 10000.0f;

  // Hybrid linear-attention (Gated DeltaNet) and MoE; 0 when the architecture has none.
  int64_t full_attention_interval = 0;
  std::vector<bool> recurrent_layers;  // per trunk layer; empty when the file has no such array
  int64_t ssm_conv_kernel = 0;
  int64_t ssm_state_size = 0;  // dk = dv
  int64_t ssm_group_count = 0;  // Hk
  int64_t ssm_time_step_rank = 0;  // Hv
  int64_t ssm_inner_size = 0;  // dv * Hv
  int64_t n_expert = 0;
  int64_t n_expert_used = 0;
  int64_t n_ff_expert = 0;
  int64_t n_ff_shared_expert = 0;
};

// Reads every key the supported architectures use; absent optional keys keep their defaults.
StatusOr<HParams> ReadHParams(const gguf::File& file);

}  // namespace ds::model
