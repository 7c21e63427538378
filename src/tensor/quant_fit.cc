#include "tensor/quant_fit.h"

#include <cmath>
#include <limits>

#include "base/check.h"
#include "tensor/fp16.h"

namespace ds::tensor::internal {
namespace {

constexpr float kMaxHalf = 65504.0f;

// The best candidate so far. A later candidate must beat it by more than tie_margin: values that
// are already exactly representable then keep the first exact fit found instead of whichever of
// several exact fits rounding noise favours, which keeps quantise(dequantise(q)) == q.
struct Best {
  Best(const float* x, int n) {
    double sum_xx = 0.0;
    for (int i = 0; i < n; ++i) sum_xx += static_cast<double>(x[i]) * x[i];
    tie_margin = 1e-9 * sum_xx;
  }
  bool Improves(double candidate_err) const { return candidate_err < err - tie_margin; }

  double tie_margin = 0.0;
  double err = std::numeric_limits<double>::infinity();
  float scale = 0.0f;
  float offset = 0.0f;
};

// Assigns levels for scale d, refits d by least squares for those levels and records the fit if
// it beats `best`. Sums are in double so that an exact fit scores (near) zero and wins.
void TrySymmetric(const float* x, int n, int qmin, int qmax, float d, Best* best) {
  double sum_xl = 0.0;
  double sum_ll = 0.0;
  int levels[256];
  for (int i = 0; i < n; ++i) {
    levels[i] = RoundClamp(x[i] / d, qmin, qmax);
    sum_xl += static_cast<double>(x[i]) * levels[i];
    sum_ll += static_cast<double>(levels[i]) * levels[i];
  }
  if (sum_ll == 0.0) return;
  const float fit = static_cast<float>(sum_xl / sum_ll);
  double err = 0.0;
  for (int i = 0; i < n; ++i) {
    const double r = static_cast<double>(x[i]) - static_cast<double>(fit) * levels[i];
    err += r * r;
  }
  if (best->Improves(err)) {
    best->err = err;
    best->scale = fit;
    best->offset = 0.0f;
  }
}

// As TrySymmetric for x ~= scale * q + offset, refitting both by least squares.
void TryAffine(const float* x, int n, int qmax, float scale, float offset, bool offset_nonpositive,
               Best* best) {
  double sum_l = 0.0, sum_ll = 0.0, sum_x = 0.0, sum_xl = 0.0;
  int levels[256];
  for (int i = 0; i < n; ++i) {
    levels[i] = RoundClamp((x[i] - offset) / scale, 0, qmax);
    sum_l += levels[i];
    sum_ll += static_cast<double>(levels[i]) * levels[i];
    sum_x += x[i];
    sum_xl += static_cast<double>(x[i]) * levels[i];
  }
  const double det = n * sum_ll - sum_l * sum_l;
  double fit_scale = scale;
  if (det > 0.0) fit_scale = (n * sum_xl - sum_l * sum_x) / det;
  double fit_offset = (sum_x - fit_scale * sum_l) / n;
  if (offset_nonpositive && fit_offset > 0.0) {
    fit_offset = 0.0;
    fit_scale = sum_ll > 0.0 ? sum_xl / sum_ll : scale;
  }
  if (fit_scale < 0.0) return;
  double err = 0.0;
  for (int i = 0; i < n; ++i) {
    const double r = x[i] - fit_scale * levels[i] - fit_offset;
    err += r * r;
  }
  if (best->Improves(err)) {
    best->err = err;
    best->scale = static_cast<float>(fit_scale);
    best->offset = static_cast<float>(fit_offset);
  }
}

// Whether any x[i] is assigned level qmin under scale d, so that negating (d, levels) would need
// the missing level -qmin.
bool UsesLowestLevel(const float* x, int n, float d, int qmin, int qmax) {
  if (d == 0.0f) return false;
  for (int i = 0; i < n; ++i) {
    if (RoundClamp(x[i] / d, qmin, qmax) == qmin) return true;
  }
  return false;
}

}  // namespace

int RoundClamp(float v, int lo, int hi) {
  if (!(v > static_cast<float>(lo))) return lo;
  if (v >= static_cast<float>(hi)) return hi;
  return static_cast<int>(std::lrint(v));
}

uint16_t ScaleToHalf(float scale) {
  if (scale > kMaxHalf) scale = kMaxHalf;
  if (scale < -kMaxHalf) scale = -kMaxHalf;
  return Fp32ToFp16(scale);
}

float FitSymmetric(const float* x, int n, int qmin, int qmax) {
  DS_CHECK(n <= 256 && qmin < 0 && qmax > 0);
  float max_abs = 0.0f;
  float max_signed = 0.0f;
  for (int i = 0; i < n; ++i) {
    if (std::fabs(x[i]) > max_abs) {
      max_abs = std::fabs(x[i]);
      max_signed = x[i];
    }
  }
  if (max_abs == 0.0f) return 0.0f;
  // Candidates put the largest element on level -k or +k, for k from the end of the range down
  // to 60% of qmax. Whole-number k are always among them, so values that are already d * q with
  // the largest on a whole level are found again exactly. Each +k candidate mirrors the -k one
  // tried just before it and ties it bit for bit, so the largest element lands on the negative
  // side (the longer one) whenever that is as good: a canonical sign that survives re-quantising.
  Best best(x, n);
  const float step = -qmin <= 8 ? 0.25f : 1.0f;
  for (float k = static_cast<float>(-qmin); k >= 0.6f * static_cast<float>(qmax); k -= step) {
    TrySymmetric(x, n, qmin, qmax, max_signed / -k, &best);
    if (k <= static_cast<float>(qmax)) TrySymmetric(x, n, qmin, qmax, max_signed / k, &best);
  }
  if (best.err == std::numeric_limits<double>::infinity()) return max_signed / qmin;
  return best.scale;
}

AffineFit FitAffine(const float* x, int n, int qmax, bool offset_nonpositive) {
  DS_CHECK(n <= 256 && qmax > 0);
  float lo = x[0];
  float hi = x[0];
  for (int i = 1; i < n; ++i) {
    lo = std::fmin(lo, x[i]);
    hi = std::fmax(hi, x[i]);
  }
  if (offset_nonpositive) lo = std::fmin(lo, 0.0f);
  if (!(hi > lo)) return {0.0f, lo};
  // Candidates stretch [lo, hi] over k levels, k from qmax down to 70% of it.
  Best best(x, n);
  const float step = qmax <= 3 ? 0.25f : (qmax <= 15 ? 0.5f : 1.0f);
  for (float k = static_cast<float>(qmax); k >= 0.7f * static_cast<float>(qmax); k -= step) {
    TryAffine(x, n, qmax, (hi - lo) / k, lo, offset_nonpositive, &best);
  }
  if (best.err == std::numeric_limits<double>::infinity()) return {(hi - lo) / qmax, lo};
  return {best.scale, best.offset};
}

void FitAffineSuperBlock(const float* x, int num_sub, int sub_len, int qmax, int sub_max,
                         AffineSuperBlock* out) {
  DS_CHECK(num_sub <= 16 && num_sub * sub_len <= 256);
  float scales[16];
  float mins[16];
  float max_scale = 0.0f;
  float max_min = 0.0f;
  for (int j = 0; j < num_sub; ++j) {
    const AffineFit fit = FitAffine(x + j * sub_len, sub_len, qmax, /*offset_nonpositive=*/true);
    scales[j] = fit.scale;
    mins[j] = -fit.offset;
    max_scale = std::fmax(max_scale, scales[j]);
    max_min = std::fmax(max_min, mins[j]);
  }
  out->d = ScaleToHalf(max_scale / sub_max);
  out->dmin = ScaleToHalf(max_min / sub_max);
  const float d = Fp16ToFp32(out->d);
  const float dmin = Fp16ToFp32(out->dmin);
  for (int j = 0; j < num_sub; ++j) {
    out->scales[j] = static_cast<uint8_t>(d > 0.0f ? RoundClamp(scales[j] / d, 0, sub_max) : 0);
    out->mins[j] = static_cast<uint8_t>(dmin > 0.0f ? RoundClamp(mins[j] / dmin, 0, sub_max) : 0);
    // The same float products the decoder forms, so levels are chosen against decoded values.
    const float eff_scale = d * out->scales[j];
    const float eff_min = dmin * out->mins[j];
    for (int i = j * sub_len; i < (j + 1) * sub_len; ++i) {
      const int q = eff_scale > 0.0f ? RoundClamp((x[i] + eff_min) / eff_scale, 0, qmax) : 0;
      out->q[i] = static_cast<uint8_t>(q);
    }
  }
}

void FitSymmetricSuperBlock(const float* x, int qmin, int qmax, int sub_min, int sub_max,
                            SymmetricSuperBlock* out) {
  DS_CHECK(sub_min < 0 && sub_max > 0);
  float scales[16];
  bool sign_free[16];
  int ref = 0;
  for (int j = 0; j < 16; ++j) {
    scales[j] = FitSymmetric(x + 16 * j, 16, qmin, qmax);
    sign_free[j] = !UsesLowestLevel(x + 16 * j, 16, scales[j], qmin, qmax);
    const float a = std::fabs(scales[j]);
    const float b = std::fabs(scales[ref]);
    if (a > b || (a == b && sign_free[ref] && !sign_free[j])) ref = j;
  }
  // Sub-block scales must share the sign of the largest one, which lands on sub_min: one of
  // nearly the same size but the other sign would need -sub_min, which does not exist. A
  // sub-block whose levels avoid qmin can flip (d, q) -> (-d, -q) for free.
  const float max_signed = scales[ref];
  for (int j = 0; j < 16; ++j) {
    if (sign_free[j] && std::signbit(scales[j]) != std::signbit(max_signed)) scales[j] = -scales[j];
  }
  // The largest sub-block scale lands on sub_min, the longer end of the signed range.
  out->d = ScaleToHalf(max_signed / sub_min);
  const float d = Fp16ToFp32(out->d);
  for (int j = 0; j < 16; ++j) {
    out->scales[j] =
        static_cast<int8_t>(d != 0.0f ? RoundClamp(scales[j] / d, sub_min, sub_max) : 0);
    const float eff_scale = d * out->scales[j];
    for (int i = 16 * j; i < 16 * (j + 1); ++i) {
      const int q = eff_scale != 0.0f ? RoundClamp(x[i] / eff_scale, qmin, qmax) : 0;
      out->q[i] = static_cast<int8_t>(q);
    }
  }
}

}  // namespace ds::tensor::internal
