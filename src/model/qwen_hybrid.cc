// Hybrid Qwen models: qwen35 (dense FFN), qwen35moe and qwen3next (MoE with a shared expert).
// Three of every four layers are Gated DeltaNet (linear attention with a recurrent state), the
// fourth is gated full attention. The architectures differ only in the traits below.
#include <vector>

#include "kernels/kernels.h"
#include "model/architectures.h"
#include "model/hybrid_layers.h"
#include "model/weights.h"

namespace ds::model {
namespace {

struct HybridTraits {
  bool moe;
  bool fused_ba;  // qwen3next packs beta and alpha into one ssm_ba matrix
  kernels::KeyHeadMapping mapping;
};

HybridTraits TraitsFor(const std::string& arch) {
  if (arch == "qwen3next") return {true, true, kernels::KeyHeadMapping::kGrouped};
  if (arch == "qwen35moe") return {true, false, kernels::KeyHeadMapping::kTiled};
  return {false, false, kernels::KeyHeadMapping::kTiled};  // qwen35
}

struct HybridLayer {
  bool recurrent;
  const float* attn_norm;            // [n_embd], stored as (1+w)
  const float* post_attention_norm;  // [n_embd], stored as (1+w)
  DeltaNetWeights delta;
  GatedAttentionWeights attention;
  MoeWeights moe;
  FfnWeights ffn;
};

// The MTP ("nextn") block after the trunk: a full-attention layer fed with
// eh_proj [enorm(embedding of token t+1) | hnorm(trunk's normed hidden state at t)], whose head
// drafts token t+2. Bound and checked at load for the speculative decoder (issue #49); the
// trunk's Forward never runs it.
struct MtpBlock {
  kernels::MatrixView eh_proj;  // {2 * n_embd, n_embd}
  const float* enorm;
  const float* hnorm;
  const float* head_norm;     // nextn.shared_head_norm, else output_norm
  kernels::MatrixView embed;  // nextn.embed_tokens, else token_embd
  kernels::MatrixView head;   // nextn.shared_head_head, else output
  HybridLayer layer;
};

class QwenHybrid : public Model {
 public:
  QwenHybrid(gguf::File& file, HParams hp, HybridTraits traits)
      : Model(std::move(hp)), traits_(traits), binder_(file) {}

  Status Bind();
  state::StateLayout StateLayoutFor(int64_t max_tokens) const override;
  Status Forward(std::span<const int32_t> tokens, state::SequenceState* state, LogitsMode mode,
                 float* logits, ThreadPool* pool) override;

 private:
  Status ValidateHParams() const;
  Status BindDeltaNet(const std::string& p, DeltaNetWeights* w);
  Status BindAttention(const std::string& p, GatedAttentionWeights* w);
  Status BindFfn(const std::string& p, HybridLayer* layer);
  Status BindLayerNorms(const std::string& p, HybridLayer* layer);
  Status BindMtp(int64_t block, MtpBlock* mtp);
  DeltaNetDims delta_dims() const;

  HybridTraits traits_;
  WeightBinder binder_;
  kernels::MatrixView token_embd_;
  kernels::MatrixView output_;  // token_embd when tied
  const float* output_norm_ = nullptr;
  std::vector<HybridLayer> layers_;
  std::vector<MtpBlock> mtp_;

  DeltaNetMixer delta_mixer_;
  GatedAttentionMixer attention_mixer_;
  MoeFfn moe_;
  std::vector<float> x_, xn_, tmp_, gate_, up_;  // [n_tokens][width]
};

bool IsRecurrentLayer(const HParams& hp, int64_t layer) {
  if (!hp.recurrent_layers.empty()) return hp.recurrent_layers[layer];
  return (layer + 1) % hp.full_attention_interval != 0;
}

Status QwenHybrid::ValidateHParams() const {
  const HParams& hp = hparams_;
  auto require = [&hp](bool ok, const std::string& what) {
    return ok ? OkStatus() : InvalidArgumentError(hp.arch + ": " + what);
  };
  if (hp.full_attention_interval == 0 && hp.recurrent_layers.empty()) {
    return InvalidArgumentError(hp.arch + ": full_attention_interval is missing");
  }
  DS_RETURN_IF_ERROR(require(hp.ssm_conv_kernel >= 1 &&
                                 hp.ssm_conv_kernel <= kernels::kMaxConvKernelSize,
                             "ssm.conv_kernel must be in [1, 8]"));
  DS_RETURN_IF_ERROR(require(hp.ssm_state_size > 0, "ssm.state_size is missing"));
  DS_RETURN_IF_ERROR(require(hp.ssm_group_count > 0 && hp.ssm_time_step_rank > 0 &&
                                 hp.ssm_time_step_rank % hp.ssm_group_count == 0,
                             "ssm.time_step_rank must be a positive multiple of ssm.group_count"));
  DS_RETURN_IF_ERROR(require(hp.ssm_inner_size == hp.ssm_state_size * hp.ssm_time_step_rank,
                             "ssm.inner_size must equal ssm.state_size * ssm.time_step_rank"));
  if (traits_.moe) {
    DS_RETURN_IF_ERROR(require(hp.n_expert > 0 && hp.n_expert_used > 0 &&
                                   hp.n_expert_used <= hp.n_expert && hp.n_ff_expert > 0 &&
                                   hp.n_ff_shared_expert > 0,
                               "expert counts and feed-forward lengths are missing or invalid"));
  } else {
    DS_RETURN_IF_ERROR(require(hp.n_ff > 0, "feed_forward_length is missing"));
  }
  return OkStatus();
}

DeltaNetDims QwenHybrid::delta_dims() const {
  const HParams& hp = hparams_;
  return {hp.n_embd,          hp.ssm_group_count, hp.ssm_time_step_rank, hp.ssm_state_size,
          hp.ssm_conv_kernel, hp.rms_eps,         traits_.mapping};
}

Status QwenHybrid::BindDeltaNet(const std::string& p, DeltaNetWeights* w) {
  const HParams& hp = hparams_;
  const DeltaNetDims d = delta_dims();
  const int64_t hv = d.num_v_heads;
  DS_ASSIGN_OR_RETURN(w->qkv, binder_.Matrix(p + "attn_qkv.weight", hp.n_embd, d.conv_dim()));
  DS_ASSIGN_OR_RETURN(w->gate, binder_.Matrix(p + "attn_gate.weight", hp.n_embd, d.value_dim()));
  w->fused_ba = traits_.fused_ba;
  if (traits_.fused_ba) {
    DS_ASSIGN_OR_RETURN(w->ba, binder_.Matrix(p + "ssm_ba.weight", hp.n_embd, 2 * hv));
  } else {
    DS_ASSIGN_OR_RETURN(w->beta, binder_.Matrix(p + "ssm_beta.weight", hp.n_embd, hv));
    DS_ASSIGN_OR_RETURN(w->alpha, binder_.Matrix(p + "ssm_alpha.weight", hp.n_embd, hv));
  }
  DS_ASSIGN_OR_RETURN(w->conv,
                      binder_.FloatsByColumn(p + "ssm_conv1d.weight", d.conv_kernel, d.conv_dim()));
  DS_ASSIGN_OR_RETURN(w->dt_bias, binder_.Vector(p + "ssm_dt.bias", hv));
  DS_ASSIGN_OR_RETURN(w->ssm_a, binder_.Vector(p + "ssm_a", hv));
  DS_ASSIGN_OR_RETURN(w->norm, binder_.Vector(p + "ssm_norm.weight", d.head_dim));
  DS_ASSIGN_OR_RETURN(w->out, binder_.Matrix(p + "ssm_out.weight", d.value_dim(), hp.n_embd));
  return OkStatus();
}

Status QwenHybrid::BindAttention(const std::string& p, GatedAttentionWeights* w) {
  const HParams& hp = hparams_;
  const int64_t q_dim = hp.n_head * hp.head_dim;
  const int64_t kv_dim = hp.n_head_kv * hp.head_dim;
  DS_ASSIGN_OR_RETURN(w->q, binder_.Matrix(p + "attn_q.weight", hp.n_embd, 2 * q_dim));
  DS_ASSIGN_OR_RETURN(w->k, binder_.Matrix(p + "attn_k.weight", hp.n_embd, kv_dim));
  DS_ASSIGN_OR_RETURN(w->v, binder_.Matrix(p + "attn_v.weight", hp.n_embd, kv_dim));
  DS_ASSIGN_OR_RETURN(w->q_norm, binder_.Vector(p + "attn_q_norm.weight", hp.head_dim));
  DS_ASSIGN_OR_RETURN(w->k_norm, binder_.Vector(p + "attn_k_norm.weight", hp.head_dim));
  DS_ASSIGN_OR_RETURN(w->out, binder_.Matrix(p + "attn_output.weight", q_dim, hp.n_embd));
  return OkStatus();
}

Status QwenHybrid::BindFfn(const std::string& p, HybridLayer* layer) {
  const HParams& hp = hparams_;
  if (!traits_.moe) {
    FfnWeights& f = layer->ffn;
    DS_ASSIGN_OR_RETURN(f.gate, binder_.Matrix(p + "ffn_gate.weight", hp.n_embd, hp.n_ff));
    DS_ASSIGN_OR_RETURN(f.up, binder_.Matrix(p + "ffn_up.weight", hp.n_embd, hp.n_ff));
    DS_ASSIGN_OR_RETURN(f.down, binder_.Matrix(p + "ffn_down.weight", hp.n_ff, hp.n_embd));
    return OkStatus();
  }
  MoeWeights& m = layer->moe;
  const int64_t ffe = hp.n_ff_expert;
  const int64_t ffs = hp.n_ff_shared_expert;
  DS_ASSIGN_OR_RETURN(m.router, binder_.Matrix(p + "ffn_gate_inp.weight", hp.n_embd, hp.n_expert));
  DS_ASSIGN_OR_RETURN(auto downs, binder_.MatrixStack(p + "ffn_down_exps.weight", ffe, hp.n_embd,
                                                      hp.n_expert));
  m.experts.clear();
  // The converter's --fuse-gate-up-exps writes each expert's gate rows, then its up rows, as one
  // matrix.
  if (binder_.Has(p + "ffn_gate_up_exps.weight")) {
    DS_ASSIGN_OR_RETURN(auto gate_up, binder_.MatrixStackParts(p + "ffn_gate_up_exps.weight",
                                                               hp.n_embd, ffe, 2, hp.n_expert));
    for (int64_t e = 0; e < hp.n_expert; ++e) {
      m.experts.push_back({gate_up[2 * e], gate_up[2 * e + 1], downs[e]});
    }
  } else {
    DS_ASSIGN_OR_RETURN(auto gates, binder_.MatrixStack(p + "ffn_gate_exps.weight", hp.n_embd,
                                                        ffe, hp.n_expert));
    DS_ASSIGN_OR_RETURN(auto ups, binder_.MatrixStack(p + "ffn_up_exps.weight", hp.n_embd, ffe,
                                                      hp.n_expert));
    for (int64_t e = 0; e < hp.n_expert; ++e) m.experts.push_back({gates[e], ups[e], downs[e]});
  }
  DS_ASSIGN_OR_RETURN(m.shared_gate, binder_.Vector(p + "ffn_gate_inp_shexp.weight", hp.n_embd));
  DS_ASSIGN_OR_RETURN(m.shared.gate, binder_.Matrix(p + "ffn_gate_shexp.weight", hp.n_embd, ffs));
  DS_ASSIGN_OR_RETURN(m.shared.up, binder_.Matrix(p + "ffn_up_shexp.weight", hp.n_embd, ffs));
  DS_ASSIGN_OR_RETURN(m.shared.down, binder_.Matrix(p + "ffn_down_shexp.weight", ffs, hp.n_embd));
  return OkStatus();
}

Status QwenHybrid::BindLayerNorms(const std::string& p, HybridLayer* layer) {
  const HParams& hp = hparams_;
  DS_ASSIGN_OR_RETURN(layer->attn_norm, binder_.Vector(p + "attn_norm.weight", hp.n_embd));
  DS_ASSIGN_OR_RETURN(layer->post_attention_norm,
                      binder_.Vector(p + "post_attention_norm.weight", hp.n_embd));
  return OkStatus();
}

Status QwenHybrid::BindMtp(int64_t block, MtpBlock* mtp) {
  const HParams& hp = hparams_;
  const std::string p = "blk." + std::to_string(block) + ".";
  const std::string n = p + "nextn.";
  DS_ASSIGN_OR_RETURN(mtp->eh_proj, binder_.Matrix(n + "eh_proj.weight", 2 * hp.n_embd, hp.n_embd));
  DS_ASSIGN_OR_RETURN(mtp->enorm, binder_.Vector(n + "enorm.weight", hp.n_embd));
  DS_ASSIGN_OR_RETURN(mtp->hnorm, binder_.Vector(n + "hnorm.weight", hp.n_embd));
  mtp->head_norm = output_norm_;
  if (binder_.Has(n + "shared_head_norm.weight")) {
    DS_ASSIGN_OR_RETURN(mtp->head_norm, binder_.Vector(n + "shared_head_norm.weight", hp.n_embd));
  }
  mtp->embed = token_embd_;
  if (binder_.Has(n + "embed_tokens.weight")) {
    DS_ASSIGN_OR_RETURN(mtp->embed,
                        binder_.RowMatrix(n + "embed_tokens.weight", hp.n_embd, hp.n_vocab));
  }
  mtp->head = output_;
  if (binder_.Has(n + "shared_head_head.weight")) {
    DS_ASSIGN_OR_RETURN(mtp->head,
                        binder_.Matrix(n + "shared_head_head.weight", hp.n_embd, hp.n_vocab));
  }
  mtp->layer.recurrent = false;
  DS_RETURN_IF_ERROR(BindLayerNorms(p, &mtp->layer));
  DS_RETURN_IF_ERROR(BindAttention(p, &mtp->layer.attention));
  return BindFfn(p, &mtp->layer);
}

Status QwenHybrid::Bind() {
  DS_RETURN_IF_ERROR(ValidateHParams());
  const HParams& hp = hparams_;
  // The converter's --mtp writes the draft block with the embedding and head but no trunk.
  if (hp.n_nextn > 0 && !binder_.Has("blk.0.attn_norm.weight")) {
    return InvalidArgumentError(binder_.display_name() +
                                ": the file holds only an MTP block, no trunk layers; load the "
                                "model file it was converted beside");
  }
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
    HybridLayer& layer = layers_[i];
    layer.recurrent = IsRecurrentLayer(hp, i);
    DS_RETURN_IF_ERROR(BindLayerNorms(p, &layer));
    if (layer.recurrent) {
      DS_RETURN_IF_ERROR(BindDeltaNet(p, &layer.delta));
    } else {
      DS_RETURN_IF_ERROR(BindAttention(p, &layer.attention));
    }
    DS_RETURN_IF_ERROR(BindFfn(p, &layer));
  }
  mtp_.resize(hp.n_nextn);
  for (int64_t i = 0; i < hp.n_nextn; ++i) DS_RETURN_IF_ERROR(BindMtp(hp.n_layer + i, &mtp_[i]));
  WarnUnboundTensors(binder_);
  return OkStatus();
}

state::StateLayout QwenHybrid::StateLayoutFor(int64_t max_tokens) const {
  const HParams& hp = hparams_;
  const DeltaNetDims d = delta_dims();
  state::StateLayout layout;
  for (const HybridLayer& layer : layers_) {
    layout.layer_kinds.push_back(layer.recurrent ? state::LayerKind::kRecurrent
                                                 : state::LayerKind::kAttention);
  }
  layout.kv_row_floats = hp.n_head_kv * hp.head_dim;
  layout.n_kv_heads = hp.n_head_kv;
  layout.tile_keys = kernels::PrefersTiledKeys();
  layout.span_values = kernels::PrefersValueSpans();
  layout.conv_floats = (d.conv_kernel - 1) * d.conv_dim();
  layout.ssm_floats = d.num_v_heads * d.head_dim * d.head_dim;
  layout.max_tokens = max_tokens;
  return layout;
}

Status QwenHybrid::Forward(std::span<const int32_t> tokens, state::SequenceState* state,
                           LogitsMode mode, float* logits, ThreadPool* pool) {
  const HParams& hp = hparams_;
  const int64_t n_tokens = static_cast<int64_t>(tokens.size());
  const int64_t width = n_tokens * hp.n_embd;
  DS_RETURN_IF_ERROR(state->Reserve(state->num_tokens() + n_tokens));
  for (auto* buf : {&x_, &xn_, &tmp_}) {
    if (static_cast<int64_t>(buf->size()) < width) buf->resize(width);
  }
  if (static_cast<int64_t>(gate_.size()) < n_tokens * hp.n_ff) {
    gate_.resize(n_tokens * hp.n_ff);
    up_.resize(n_tokens * hp.n_ff);
  }

  EmbedTokens(token_embd_, tokens, x_.data());
  for (int layer = 0; layer < hp.n_layer; ++layer) {
    const HybridLayer& l = layers_[layer];
    RmsNormRows(x_.data(), l.attn_norm, n_tokens, hp.n_embd, hp.rms_eps, xn_.data(), pool);
    if (l.recurrent) {
      delta_mixer_.Forward(delta_dims(), l.delta, xn_.data(), n_tokens, state->conv_state(layer),
                           state->ssm_state(layer), tmp_.data(), pool);
    } else {
      attention_mixer_.Forward(hp, l.attention, xn_.data(), n_tokens, layer, state, tmp_.data(),
                               pool);
    }
    AddRows(x_.data(), tmp_.data(), n_tokens, hp.n_embd, pool);

    RmsNormRows(x_.data(), l.post_attention_norm, n_tokens, hp.n_embd, hp.rms_eps, xn_.data(),
                pool);
    if (traits_.moe) {
      moe_.Forward(hp, l.moe, xn_.data(), n_tokens, tmp_.data(), pool);
    } else {
      SwiGluFfn(l.ffn, xn_.data(), n_tokens, gate_.data(), up_.data(), tmp_.data(), pool);
    }
    AddRows(x_.data(), tmp_.data(), n_tokens, hp.n_embd, pool);
  }
  state->Advance(n_tokens);

  const int64_t first_out = mode == LogitsMode::kAll ? 0 : n_tokens - 1;
  const int64_t n_out = n_tokens - first_out;
  RmsNormRows(x_.data() + first_out * hp.n_embd, output_norm_, n_out, hp.n_embd, hp.rms_eps,
              xn_.data(), pool);
  Linear(output_, nullptr, xn_.data(), n_out, logits, pool);
  return OkStatus();
}

}  // namespace

StatusOr<std::unique_ptr<Model>> LoadQwenHybrid(gguf::File& file, HParams hp) {
  HybridTraits traits = TraitsFor(hp.arch);
  auto model = std::make_unique<QwenHybrid>(file, std::move(hp), traits);
  DS_RETURN_IF_ERROR(model->Bind());
  return std::unique_ptr<Model>(std::move(model));
}

}  // namespace ds::model
