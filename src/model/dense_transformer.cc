// Dense decoder-only transformers: llama, qwen2 (q/k/v biases) and qwen3 (per-head q/k RMSNorm).
// The three differ only in the per-architecture traits below; Forward() reads top to bottom.
#include <cstring>
#include <vector>

#include "kernels/kernels.h"
#include "model/architectures.h"
#include "model/blocks.h"
#include "model/weights.h"

namespace ds::model {
namespace {

struct ArchTraits {
  kernels::RopeStyle rope_style;
  bool qkv_bias;
  bool qk_norm;
};

ArchTraits TraitsFor(const std::string& arch) {
  if (arch == "qwen2") return {kernels::RopeStyle::kNeox, true, false};
  if (arch == "qwen3") return {kernels::RopeStyle::kNeox, false, true};
  return {kernels::RopeStyle::kNorm, false, false};  // llama
}

struct LayerWeights {
  const float* attn_norm;   // [n_embd]
  kernels::MatrixView wq;   // {n_embd, n_head * head_dim}
  kernels::MatrixView wk;   // {n_embd, n_head_kv * head_dim}
  kernels::MatrixView wv;   // {n_embd, n_head_kv * head_dim}
  const float* bq = nullptr;
  const float* bk = nullptr;
  const float* bv = nullptr;
  const float* q_norm = nullptr;  // [head_dim]
  const float* k_norm = nullptr;  // [head_dim]
  kernels::MatrixView wo;   // {n_head * head_dim, n_embd}
  const float* ffn_norm;    // [n_embd]
  FfnWeights ffn;
};

class DenseTransformer : public Model {
 public:
  DenseTransformer(gguf::File& file, HParams hp, ArchTraits traits)
      : Model(std::move(hp)), traits_(traits), binder_(file) {}

  Status Bind();
  state::StateLayout StateLayoutFor(int64_t max_tokens) const override;
  Status Forward(std::span<const int32_t> tokens, state::SequenceState* state, LogitsMode mode,
                 float* logits, ThreadPool* pool) override;

 private:
  void AttentionBlock(int layer, int64_t n_tokens, state::SequenceState* state, ThreadPool* pool);
  void ResizeScratch(int64_t n_tokens);

  ArchTraits traits_;
  WeightBinder binder_;  // owns the f32 copies of norm weights and biases
  kernels::MatrixView token_embd_;
  kernels::MatrixView output_;  // token_embd when the output is tied
  const float* output_norm_ = nullptr;
  std::vector<LayerWeights> layers_;

  // Scratch, sized for the largest batch seen so far: [n_tokens][width].
  std::vector<float> x_, xn_, q_, k_, v_, attn_, tmp_, gate_, up_;
};

Status DenseTransformer::Bind() {
  const HParams& hp = hparams_;
  if (hp.n_ff <= 0) return InvalidArgumentError(hp.arch + ".feed_forward_length is missing");
  const int64_t q_dim = hp.n_head * hp.head_dim;
  const int64_t kv_dim = hp.n_head_kv * hp.head_dim;
  DS_ASSIGN_OR_RETURN(token_embd_, binder_.RowMatrix("token_embd.weight", hp.n_embd, hp.n_vocab));
  DS_ASSIGN_OR_RETURN(output_norm_, binder_.Vector("output_norm.weight", hp.n_embd));
  if (binder_.Has("output.weight")) {
    DS_ASSIGN_OR_RETURN(output_, binder_.Matrix("output.weight", hp.n_embd, hp.n_vocab));
  } else {
    output_ = token_embd_;
  }
  layers_.resize(hp.n_layer);
  for (int64_t i = 0; i < hp.n_layer; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    LayerWeights& l = layers_[i];
    DS_ASSIGN_OR_RETURN(l.attn_norm, binder_.Vector(p + "attn_norm.weight", hp.n_embd));
    DS_ASSIGN_OR_RETURN(l.wq, binder_.Matrix(p + "attn_q.weight", hp.n_embd, q_dim));
    DS_ASSIGN_OR_RETURN(l.wk, binder_.Matrix(p + "attn_k.weight", hp.n_embd, kv_dim));
    DS_ASSIGN_OR_RETURN(l.wv, binder_.Matrix(p + "attn_v.weight", hp.n_embd, kv_dim));
    if (traits_.qkv_bias) {
      DS_ASSIGN_OR_RETURN(l.bq, binder_.Vector(p + "attn_q.bias", q_dim));
      DS_ASSIGN_OR_RETURN(l.bk, binder_.Vector(p + "attn_k.bias", kv_dim));
      DS_ASSIGN_OR_RETURN(l.bv, binder_.Vector(p + "attn_v.bias", kv_dim));
    }
    if (traits_.qk_norm) {
      DS_ASSIGN_OR_RETURN(l.q_norm, binder_.Vector(p + "attn_q_norm.weight", hp.head_dim));
      DS_ASSIGN_OR_RETURN(l.k_norm, binder_.Vector(p + "attn_k_norm.weight", hp.head_dim));
    }
    DS_ASSIGN_OR_RETURN(l.wo, binder_.Matrix(p + "attn_output.weight", q_dim, hp.n_embd));
    DS_ASSIGN_OR_RETURN(l.ffn_norm, binder_.Vector(p + "ffn_norm.weight", hp.n_embd));
    DS_ASSIGN_OR_RETURN(l.ffn.gate, binder_.Matrix(p + "ffn_gate.weight", hp.n_embd, hp.n_ff));
    DS_ASSIGN_OR_RETURN(l.ffn.up, binder_.Matrix(p + "ffn_up.weight", hp.n_embd, hp.n_ff));
    DS_ASSIGN_OR_RETURN(l.ffn.down, binder_.Matrix(p + "ffn_down.weight", hp.n_ff, hp.n_embd));
  }
  WarnUnboundTensors(binder_);
  return OkStatus();
}

state::StateLayout DenseTransformer::StateLayoutFor(int64_t max_tokens) const {
  state::StateLayout layout;
  layout.layer_kinds.assign(hparams_.n_layer, state::LayerKind::kAttention);
  layout.kv_row_floats = hparams_.n_head_kv * hparams_.head_dim;
  layout.n_kv_heads = hparams_.n_head_kv;
  layout.tile_keys = kernels::PrefersTiledKeys();
  layout.span_values = kernels::PrefersValueSpans();
  layout.max_tokens = max_tokens;
  return layout;
}

void DenseTransformer::ResizeScratch(int64_t n_tokens) {
  const HParams& hp = hparams_;
  auto fit = [n_tokens](std::vector<float>& buf, int64_t width) {
    if (static_cast<int64_t>(buf.size()) < n_tokens * width) buf.resize(n_tokens * width);
  };
  fit(x_, hp.n_embd);
  fit(xn_, hp.n_embd);
  fit(q_, hp.n_head * hp.head_dim);
  fit(k_, hp.n_head_kv * hp.head_dim);
  fit(v_, hp.n_head_kv * hp.head_dim);
  fit(attn_, hp.n_head * hp.head_dim);
  fit(tmp_, hp.n_embd);
  fit(gate_, hp.n_ff);
  fit(up_, hp.n_ff);
}

void DenseTransformer::AttentionBlock(int layer, int64_t n_tokens, state::SequenceState* state,
                                      ThreadPool* pool) {
  const HParams& hp = hparams_;
  const LayerWeights& l = layers_[layer];
  const int64_t q_dim = hp.n_head * hp.head_dim;
  const int64_t kv_dim = hp.n_head_kv * hp.head_dim;
  const int64_t first_pos = state->num_tokens();

  Project(xn_.data(), n_tokens, {{l.wq, q_.data()}, {l.wk, k_.data()}, {l.wv, v_.data()}}, pool);
  AddBias(l.bq, n_tokens, q_dim, q_.data());
  AddBias(l.bk, n_tokens, kv_dim, k_.data());
  AddBias(l.bv, n_tokens, kv_dim, v_.data());
  if (traits_.qk_norm) {
    RmsNormRows(q_.data(), l.q_norm, n_tokens * hp.n_head, hp.head_dim, hp.rms_eps, q_.data(),
                pool);
    RmsNormRows(k_.data(), l.k_norm, n_tokens * hp.n_head_kv, hp.head_dim, hp.rms_eps,
                k_.data(), pool);
  }
  ForRanges(pool, n_tokens, 4 * (q_dim + kv_dim), [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      kernels::Rope(q_.data() + t * q_dim, hp.n_head, hp.head_dim, hp.n_rot, first_pos + t,
                    hp.rope_freq_base, traits_.rope_style);
      kernels::Rope(k_.data() + t * kv_dim, hp.n_head_kv, hp.head_dim, hp.n_rot, first_pos + t,
                    hp.rope_freq_base, traits_.rope_style);
    }
  });
  AttendOverCache(hp, layer, q_.data(), k_.data(), v_.data(), n_tokens, state, attn_.data(), pool);
  Linear(l.wo, nullptr, attn_.data(), n_tokens, tmp_.data(), pool);
}

Status DenseTransformer::Forward(std::span<const int32_t> tokens, state::SequenceState* state,
                                 LogitsMode mode, float* logits, ThreadPool* pool) {
  const HParams& hp = hparams_;
  const int64_t n_tokens = static_cast<int64_t>(tokens.size());
  DS_RETURN_IF_ERROR(state->Reserve(state->num_tokens() + n_tokens));
  ResizeScratch(n_tokens);

  EmbedTokens(token_embd_, tokens, x_.data());
  for (int layer = 0; layer < hp.n_layer; ++layer) {
    const LayerWeights& l = layers_[layer];
    RmsNormRows(x_.data(), l.attn_norm, n_tokens, hp.n_embd, hp.rms_eps, xn_.data(), pool);
    AttentionBlock(layer, n_tokens, state, pool);
    AddRows(x_.data(), tmp_.data(), n_tokens, hp.n_embd, pool);

    RmsNormRows(x_.data(), l.ffn_norm, n_tokens, hp.n_embd, hp.rms_eps, xn_.data(), pool);
    SwiGluFfn(l.ffn, xn_.data(), n_tokens, gate_.data(), up_.data(), tmp_.data(), pool);
    AddRows(x_.data(), tmp_.data(), n_tokens, hp.n_embd, pool);
  }
  state->Advance(n_tokens);

  const int64_t first_out = mode == LogitsMode::kAll ? 0 : n_tokens - 1;
  const int64_t n_out = n_tokens - first_out;
  const float* x_out = x_.data() + first_out * hp.n_embd;
  RmsNormRows(x_out, output_norm_, n_out, hp.n_embd, hp.rms_eps, xn_.data(), pool);
  Linear(output_, nullptr, xn_.data(), n_out, logits, pool);
  return OkStatus();
}

}  // namespace

StatusOr<std::unique_ptr<Model>> LoadDenseTransformer(gguf::File& file, HParams hp) {
  ArchTraits traits = TraitsFor(hp.arch);
  auto model = std::make_unique<DenseTransformer>(file, std::move(hp), traits);
  DS_RETURN_IF_ERROR(model->Bind());
  return std::unique_ptr<Model>(std::move(model));
}

}  // namespace ds::model
