// Test support: rewrites a hybrid model into the other layouts llama.cpp's converter writes for
// these architectures, with the trunk's weights unchanged, so a test can hold each layout to the
// original file's reference outputs.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "gguf/gguf.h"

namespace ds::apps {

struct PublishedLayout {
  int64_t n_mtp = 0;                // MTP blocks appended (random weights)
  bool mtp_own_head = false;        // with nextn.embed_tokens and nextn.shared_head_head
  bool fuse_gate_up_exps = false;   // --fuse-gate-up-exps: ffn_gate_up_exps per MoE layer
  bool recurrent_layers = false;    // an attention.recurrent_layers array over every block
  bool unknown_tensor = false;      // one tensor no architecture binds
};

StatusOr<gguf::Writer> Relayout(const gguf::File& source, const PublishedLayout& layout);

}  // namespace ds::apps
