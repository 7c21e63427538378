#include "apps/scripted_model.h"

#include <algorithm>
#include <cstring>

namespace ds::apps {
namespace {

model::HParams ScriptHParams(int64_t n_vocab) {
  model::HParams hp;
  hp.arch = "scripted";
  hp.n_vocab = n_vocab;
  hp.n_embd = 1;
  hp.n_layer = 1;
  hp.n_head = 1;
  hp.n_head_kv = 1;
  hp.head_dim = 1;
  return hp;
}

}  // namespace

ScriptedModel::ScriptedModel(int64_t n_vocab, std::vector<int32_t> script)
    : Model(ScriptHParams(n_vocab)), script_(std::move(script)) {}

state::StateLayout ScriptedModel::StateLayoutFor(int64_t max_tokens) const {
  state::StateLayout layout;
  layout.layer_kinds = {state::LayerKind::kAttention};
  layout.kv_row_floats = 1;
  layout.max_tokens = max_tokens;
  return layout;
}

Status ScriptedModel::Forward(std::span<const int32_t> tokens, state::SequenceState* state,
                              model::LogitsMode mode, float* logits, ThreadPool*) {
  const int64_t n = static_cast<int64_t>(tokens.size());
  const int64_t first = state->num_tokens();
  DS_RETURN_IF_ERROR(state->Reserve(first + n));
  // The first K row keeps the prompt length (f32 rows of one element).
  if (first == 0) {
    const float length = static_cast<float>(n);
    std::memcpy(state->key_rows(0), &length, sizeof length);
  }
  state->Advance(n);
  float prompt_length_f;
  std::memcpy(&prompt_length_f, state->key_rows(0), sizeof prompt_length_f);
  const int64_t prompt_length = static_cast<int64_t>(prompt_length_f);
  const int64_t rows = mode == model::LogitsMode::kAll ? n : 1;
  const int64_t n_vocab = hparams_.n_vocab;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t step = state->num_tokens() - (rows - 1 - r) - prompt_length;
    int32_t id = script_[std::clamp<int64_t>(step, 0, script_.size() - 1)];
    std::fill(logits + r * n_vocab, logits + (r + 1) * n_vocab, -30.0f);
    logits[r * n_vocab + id] = 30.0f;
  }
  return OkStatus();
}

}  // namespace ds::apps
