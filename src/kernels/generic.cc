// The portable kernel table: plain C++ that compilers vectorise for the build target, the
// "scalar" path on every architecture. Quantised weights use the same int8 activation
// formats and integer block arithmetic as the SIMD tables.

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/act_quant.h"
#include "kernels/kernel_table.h"
#include "tensor/fp16.h"
#include "tensor/quant.h"

namespace ds::kernels::internal {
namespace {

using tensor::kQK;
using tensor::kQK_K;

// The portable kernels compute one weight row against the token tile; a tile of rows is a loop.
using RowDotFn = void (*)(const uint8_t* w_row, int64_t n_cols, const uint8_t* act,
                          int64_t act_stride_bytes, int num_tokens, float* out);

template <RowDotFn kRowDot>
void EachRow(const uint8_t* w, int64_t w_stride, int64_t num_rows, int64_t n_cols,
             const uint8_t* act, int64_t act_stride, int num_tokens, float* out) {
  for (int64_t r = 0; r < num_rows; ++r) {
    kRowDot(w + r * w_stride, n_cols, act, act_stride, num_tokens, out + r * num_tokens);
  }
}

// ---- float weights ----

template <typename WeightToFloat>
void FloatRowDot(const uint8_t* w_row, int64_t n_cols, const uint8_t* act, int64_t act_stride,
                 int num_tokens, float* out, WeightToFloat weight_at) {
  for (int t = 0; t < num_tokens; ++t) {
    const float* x = reinterpret_cast<const float*>(act + t * act_stride);
    float lanes[8] = {};
    int64_t i = 0;
    for (; i + 8 <= n_cols; i += 8) {
      for (int l = 0; l < 8; ++l) lanes[l] += weight_at(w_row, i + l) * x[i + l];
    }
    for (; i < n_cols; ++i) lanes[i % 8] += weight_at(w_row, i) * x[i];
    float sum = 0.0f;
    for (float lane : lanes) sum += lane;
    out[t] = sum;
  }
}

void RowDotF32(const uint8_t* w, int64_t n, const uint8_t* a, int64_t s, int nt, float* out) {
  FloatRowDot(w, n, a, s, nt, out, [](const uint8_t* row, int64_t i) {
    float v;
    std::memcpy(&v, row + 4 * i, 4);
    return v;
  });
}

void RowDotF16(const uint8_t* w, int64_t n, const uint8_t* a, int64_t s, int nt, float* out) {
  FloatRowDot(w, n, a, s, nt, out, [](const uint8_t* row, int64_t i) {
    uint16_t h;
    std::memcpy(&h, row + 2 * i, 2);
    return tensor::Fp16ToFp32(h);
  });
}

void RowDotBF16(const uint8_t* w, int64_t n, const uint8_t* a, int64_t s, int nt, float* out) {
  FloatRowDot(w, n, a, s, nt, out, [](const uint8_t* row, int64_t i) {
    uint16_t h;
    std::memcpy(&h, row + 2 * i, 2);
    return tensor::Bf16ToFp32(h);
  });
}

// ---- 32-element blocks: weight x[j] = d * q[j] + m ----

struct Legacy32 {
  float d;
  float m;
  int8_t q[kQK];
};

void LowHighNibbles(const uint8_t* qs, int offset, int8_t* q) {
  for (int j = 0; j < kQK / 2; ++j) {
    q[j] = static_cast<int8_t>((qs[j] & 0xf) - offset);
    q[j + kQK / 2] = static_cast<int8_t>((qs[j] >> 4) - offset);
  }
}

// Adds bit 4 of element j (bit j of the little-endian qh) to q[j].
void AddFifthBits(const uint8_t* qh_bytes, int8_t* q) {
  uint32_t qh;
  std::memcpy(&qh, qh_bytes, 4);
  for (int j = 0; j < kQK; ++j) q[j] = static_cast<int8_t>(q[j] + (((qh >> j) & 1) << 4));
}

void DecodeQ4_0(const uint8_t* p, Legacy32* out) {
  const auto* b = reinterpret_cast<const tensor::BlockQ4_0*>(p);
  *out = {tensor::Fp16ToFp32(b->d), 0.0f, {}};
  LowHighNibbles(b->qs, 8, out->q);
}

void DecodeQ4_1(const uint8_t* p, Legacy32* out) {
  const auto* b = reinterpret_cast<const tensor::BlockQ4_1*>(p);
  *out = {tensor::Fp16ToFp32(b->d), tensor::Fp16ToFp32(b->m), {}};
  LowHighNibbles(b->qs, 0, out->q);
}

void DecodeQ5_0(const uint8_t* p, Legacy32* out) {
  const auto* b = reinterpret_cast<const tensor::BlockQ5_0*>(p);
  *out = {tensor::Fp16ToFp32(b->d), 0.0f, {}};
  LowHighNibbles(b->qs, 16, out->q);
  AddFifthBits(b->qh, out->q);
}

void DecodeQ5_1(const uint8_t* p, Legacy32* out) {
  const auto* b = reinterpret_cast<const tensor::BlockQ5_1*>(p);
  *out = {tensor::Fp16ToFp32(b->d), tensor::Fp16ToFp32(b->m), {}};
  LowHighNibbles(b->qs, 0, out->q);
  AddFifthBits(b->qh, out->q);
}

void DecodeQ8_0(const uint8_t* p, Legacy32* out) {
  const auto* b = reinterpret_cast<const tensor::BlockQ8_0*>(p);
  *out = {tensor::Fp16ToFp32(b->d), 0.0f, {}};
  std::memcpy(out->q, b->qs, kQK);
}

template <typename Block, void (*Decode)(const uint8_t*, Legacy32*)>
void LegacyRowDot(const uint8_t* w_row, int64_t n_cols, const uint8_t* act, int64_t act_stride,
                  int num_tokens, float* out) {
  float sums[kMaxTileTokens] = {};
  for (int64_t b = 0; b < n_cols / kQK; ++b) {
    Legacy32 w;
    Decode(w_row + b * static_cast<int64_t>(sizeof(Block)), &w);
    for (int t = 0; t < num_tokens; ++t) {
      const auto& a = reinterpret_cast<const ActBlockQ8*>(act + t * act_stride)[b];
      int32_t isum = 0;
      for (int j = 0; j < kQK; ++j) isum += w.q[j] * a.qs[j];
      sums[t] += w.d * a.d * static_cast<float>(isum) + w.m * a.d_sum;
    }
  }
  for (int t = 0; t < num_tokens; ++t) out[t] = sums[t];
}

// ---- 256-element super-blocks ----
// Weight element e of sub-block s = e / 16 is d * sc[s] * (q[e] - offset) - dmin * mn[s].

struct Unpacked256 {
  float d;
  float dmin;
  int offset;
  uint8_t q[kQK_K];
  int16_t sc[16];
  int16_t mn[16];
};

// Low 2 bits of element 128h + 32s + 16g + l are bits 2s of qs[32h + 16g + l] (Q2_K and Q3_K).
void TwoBitQuants(const uint8_t* qs, uint8_t* q) {
  for (int e = 0; e < kQK_K; ++e) {
    const int h = e / 128, s = (e / 32) % 4, rest = e % 32;
    q[e] = static_cast<uint8_t>((qs[32 * h + rest] >> (2 * s)) & 3);
  }
}

void DecodeQ2_K(const uint8_t* p, Unpacked256* out) {
  const auto* b = reinterpret_cast<const tensor::BlockQ2_K*>(p);
  out->d = tensor::Fp16ToFp32(b->d);
  out->dmin = tensor::Fp16ToFp32(b->dmin);
  out->offset = 0;
  TwoBitQuants(b->qs, out->q);
  for (int s = 0; s < 16; ++s) {
    out->sc[s] = b->scales[s] & 0xf;
    out->mn[s] = b->scales[s] >> 4;
  }
}

void DecodeQ3_K(const uint8_t* p, Unpacked256* out) {
  const auto* b = reinterpret_cast<const tensor::BlockQ3_K*>(p);
  out->d = tensor::Fp16ToFp32(b->d);
  out->dmin = 0.0f;
  out->offset = 4;
  TwoBitQuants(b->qs, out->q);
  for (int e = 0; e < kQK_K; ++e) {
    out->q[e] = static_cast<uint8_t>(out->q[e] + (((b->hmask[e % 32] >> (e / 32)) & 1) << 2));
  }
  for (int s = 0; s < 16; ++s) {
    out->sc[s] = static_cast<int16_t>(tensor::Q3KScale(b->scales, s) - 32);
    out->mn[s] = 0;
  }
}

// Q4_K and Q5_K: nibble `hi` of qs[32c + l] is element 64c + 32hi + l.
void FourBitQuantsAndScales(const uint8_t* qs, const uint8_t* scales, Unpacked256* out) {
  for (int e = 0; e < kQK_K; ++e) {
    const uint8_t byte = qs[32 * (e / 64) + e % 32];
    out->q[e] = static_cast<uint8_t>(((e / 32) % 2 == 0) ? (byte & 0xf) : (byte >> 4));
  }
  for (int j = 0; j < 8; ++j) {
    uint8_t scale, min;
    tensor::UnpackScaleMinK4(scales, j, &scale, &min);
    out->sc[2 * j] = out->sc[2 * j + 1] = scale;
    out->mn[2 * j] = out->mn[2 * j + 1] = min;
  }
}

void DecodeQ4_K(const uint8_t* p, Unpacked256* out) {
  const auto* b = reinterpret_cast<const tensor::BlockQ4_K*>(p);
  out->d = tensor::Fp16ToFp32(b->d);
  out->dmin = tensor::Fp16ToFp32(b->dmin);
  out->offset = 0;
  FourBitQuantsAndScales(b->qs, b->scales, out);
}

void DecodeQ5_K(const uint8_t* p, Unpacked256* out) {
  const auto* b = reinterpret_cast<const tensor::BlockQ5_K*>(p);
  out->d = tensor::Fp16ToFp32(b->d);
  out->dmin = tensor::Fp16ToFp32(b->dmin);
  out->offset = 0;
  FourBitQuantsAndScales(b->qs, b->scales, out);
  for (int e = 0; e < kQK_K; ++e) {
    out->q[e] = static_cast<uint8_t>(out->q[e] + (((b->qh[e % 32] >> (e / 32)) & 1) << 4));
  }
}

void DecodeQ6_K(const uint8_t* p, Unpacked256* out) {
  const auto* b = reinterpret_cast<const tensor::BlockQ6_K*>(p);
  out->d = tensor::Fp16ToFp32(b->d);
  out->dmin = 0.0f;
  out->offset = 32;
  for (int e = 0; e < kQK_K; ++e) {
    const int h = e / 128, s = (e / 32) % 4, l = e % 32;
    const uint8_t low_byte = b->ql[64 * h + 32 * (s & 1) + l];
    const int low = s >= 2 ? low_byte >> 4 : low_byte & 0xf;
    const int high = (b->qh[32 * h + l] >> (2 * s)) & 3;
    out->q[e] = static_cast<uint8_t>(low | (high << 4));
  }
  for (int s = 0; s < 16; ++s) {
    out->sc[s] = b->scales[s];
    out->mn[s] = 0;
  }
}

template <typename Block, void (*Decode)(const uint8_t*, Unpacked256*)>
void KQuantRowDot(const uint8_t* w_row, int64_t n_cols, const uint8_t* act, int64_t act_stride,
                  int num_tokens, float* out) {
  float sums[kMaxTileTokens] = {};
  for (int64_t b = 0; b < n_cols / kQK_K; ++b) {
    Unpacked256 w;
    Decode(w_row + b * static_cast<int64_t>(sizeof(Block)), &w);
    for (int t = 0; t < num_tokens; ++t) {
      const auto& a = reinterpret_cast<const tensor::BlockQ8_K*>(act + t * act_stride)[b];
      int32_t scaled = 0;
      int32_t mins = 0;
      for (int s = 0; s < 16; ++s) {
        int32_t dot = 0;
        for (int l = 0; l < 16; ++l) dot += w.q[16 * s + l] * a.qs[16 * s + l];
        scaled += w.sc[s] * (dot - w.offset * a.bsums[s]);
        mins += w.mn[s] * a.bsums[s];
      }
      sums[t] += a.d * (w.d * static_cast<float>(scaled) - w.dmin * static_cast<float>(mins));
    }
  }
  for (int t = 0; t < num_tokens; ++t) out[t] = sums[t];
}

// ---- elementwise and reductions ----

float DotF32(const float* a, const float* b, int64_t n) {
  float lanes[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int l = 0; l < 8; ++l) lanes[l] += a[i + l] * b[i + l];
  }
  for (; i < n; ++i) lanes[i % 8] += a[i] * b[i];
  float sum = 0.0f;
  for (float lane : lanes) sum += lane;
  return sum;
}

void AxpyF32(float a, const float* x, int64_t n, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}

void ScaleF32(float s, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] *= s;
}

void ExpF32(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = std::exp(x[i]);
}

void RmsNormF32(const float* x, const float* weight, int64_t n, float eps, float* y) {
  const float mean_sq = DotF32(x, x, n) / static_cast<float>(n);
  const float scale = 1.0f / std::sqrt(mean_sq + eps);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * scale * (weight != nullptr ? weight[i] : 1.0f);
}

float SiluOf(float x) { return x / (1.0f + std::exp(-x)); }

void SwiGluF32(const float* gate, const float* up, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = SiluOf(gate[i]) * up[i];
}

void SiluF32(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = SiluOf(x[i]);
}

void SigmoidGateF32(float* x, const float* gate, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] /= 1.0f + std::exp(-gate[i]);
}

void SoftmaxF32(float* x, int64_t n) {
  float max = x[0];
  for (int64_t i = 1; i < n; ++i) max = x[i] > max ? x[i] : max;
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) sum += (x[i] = std::exp(x[i] - max));
  ScaleF32(1.0f / sum, x, n);
}

void RopeF32(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, RopeStyle style,
             const float* factors) {
  const int64_t half = n_rot / 2;
  for (int64_t h = 0; h < n_heads; ++h) {
    float* head = x + h * head_dim;
    if (style == RopeStyle::kNeox) {
      for (int64_t i = 0; i < half; ++i) {
        const float c = factors[i], s = factors[half + i];
        const float x0 = head[i], x1 = head[i + half];
        head[i] = x0 * c - x1 * s;
        head[i + half] = x0 * s + x1 * c;
      }
    } else {
      for (int64_t i = 0; i < n_rot; i += 2) {
        const float x0 = head[i], x1 = head[i + 1];
        head[i] = x0 * factors[i] + x1 * factors[n_rot + i];
        head[i + 1] = x1 * factors[i + 1] + x0 * factors[n_rot + i + 1];
      }
    }
  }
}

#include "kernels/attend.inc"

void BlockMaximaF32(const float* x, int64_t n_blocks, float* maxima) {
  for (int64_t b = 0; b < n_blocks; ++b) {
    maxima[b] = *std::max_element(x + b * kTopKBlock, x + (b + 1) * kTopKBlock);
  }
}

int64_t IndicesAtLeastF32(const float* x, int64_t n, float threshold, int32_t* indices) {
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (x[i] >= threshold) indices[count++] = static_cast<int32_t>(i);
  }
  return count;
}

// Eight lanes per chain, which the compiler may turn into one vector per chain. A multiply and
// an add count as one multiply-add here, as they cost one where the build contracts them.
float FmaBurn(int64_t rounds) {
  float lanes[kFmaBurnChains][8];
  for (int c = 0; c < kFmaBurnChains; ++c) std::fill(lanes[c], lanes[c] + 8, FmaBurnChainStart(c));
  for (int64_t i = 0; i < rounds; ++i) {
    for (auto& chain : lanes) {
      for (float& v : chain) v = v * 0.9999999f + 1e-7f;
    }
  }
  float sum = 0.0f;
  for (const auto& chain : lanes) {
    for (float v : chain) sum += v;
  }
  return sum;
}

}  // namespace

const KernelTable& GenericTable() {
  static const KernelTable table = {
      "scalar",
      EachRow<RowDotF32>,
      EachRow<RowDotF16>,
      EachRow<RowDotBF16>,
      false,
      EachRow<LegacyRowDot<tensor::BlockQ4_0, DecodeQ4_0>>,
      EachRow<LegacyRowDot<tensor::BlockQ4_1, DecodeQ4_1>>,
      EachRow<LegacyRowDot<tensor::BlockQ5_0, DecodeQ5_0>>,
      EachRow<LegacyRowDot<tensor::BlockQ5_1, DecodeQ5_1>>,
      EachRow<LegacyRowDot<tensor::BlockQ8_0, DecodeQ8_0>>,
      EachRow<KQuantRowDot<tensor::BlockQ2_K, DecodeQ2_K>>,
      EachRow<KQuantRowDot<tensor::BlockQ3_K, DecodeQ3_K>>,
      EachRow<KQuantRowDot<tensor::BlockQ4_K, DecodeQ4_K>>,
      EachRow<KQuantRowDot<tensor::BlockQ5_K, DecodeQ5_K>>,
      EachRow<KQuantRowDot<tensor::BlockQ6_K, DecodeQ6_K>>,
      QuantizeRowQ8Portable,
      QuantizeRowQ8KPortable,
      RmsNormF32,
      SwiGluF32,
      SiluF32,
      SigmoidGateF32,
      SoftmaxF32,
      DotF32,
      AxpyF32,
      RopeF32,
      Attend,
      AttendMerge,
      false,
      false,
      BlockMaximaF32,
      IndicesAtLeastF32,
      FmaBurn,
      8,
      nullptr,
      0,
      nullptr,
      nullptr,
      nullptr,
      nullptr,
      nullptr,
      nullptr,
  };
  return table;
}

}  // namespace ds::kernels::internal
