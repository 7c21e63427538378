// Scale fitting shared by the quantisers (internal to the tensor library). Each fit chooses block
// scales by trying a few candidate scales, assigning every element its nearest level, refitting
// the scale (and offset) by least squares for that assignment, and keeping the candidate with the
// smallest squared error. Callers then round the chosen scales to their stored precision and
// re-assign levels against the stored values, so what they write is exactly what decodes.
// REQUIRES everywhere: finite inputs. Scales beyond the half range saturate at +-65504.
// Thread safety: pure functions.
#pragma once

#include <cstdint>

namespace ds::tensor::internal {

// Round-to-nearest-even of v, clamped to [lo, hi] (NaN maps to lo).
int RoundClamp(float v, int lo, int hi);

// Half bits of `scale`, with magnitudes past the largest finite half clamped to it.
uint16_t ScaleToHalf(float scale);

// x[0..n) ~= d * q, q integer in [qmin, qmax] (qmin <= -qmax < 0). Returns d, 0 for an all-zero
// x. The sign of d is free; between equally good fits the largest element goes to a negative level.
float FitSymmetric(const float* x, int n, int qmin, int qmax);

// x[0..n) ~= scale * q + offset, q integer in [0, qmax], scale >= 0. When offset_nonpositive the
// offset is kept <= 0 (the K-quants store it as an unsigned min that is subtracted).
struct AffineFit {
  float scale;
  float offset;
};
AffineFit FitAffine(const float* x, int n, int qmax, bool offset_nonpositive);

// A super-block of num_sub sub-blocks of sub_len elements (num_sub * sub_len <= 256), each
// x ~= d * scales[j] * q - dmin * mins[j] with q in [0, qmax] and 0 <= scales, mins <= sub_max.
struct AffineSuperBlock {
  uint16_t d;     // half bits
  uint16_t dmin;  // half bits
  uint8_t scales[16];
  uint8_t mins[16];
  uint8_t q[256];
};
void FitAffineSuperBlock(const float* x, int num_sub, int sub_len, int qmax, int sub_max,
                         AffineSuperBlock* out);

// A super-block of 16 sub-blocks of 16 elements, each x ~= d * scales[j] * q with q in
// [qmin, qmax] and scales[j] in [sub_min, sub_max] (sub_min < 0 < sub_max). The largest sub-block
// scale maps to sub_min.
struct SymmetricSuperBlock {
  uint16_t d;  // half bits
  int8_t scales[16];
  int8_t q[256];
};
void FitSymmetricSuperBlock(const float* x, int qmin, int qmax, int sub_min, int sub_max,
                            SymmetricSuperBlock* out);

}  // namespace ds::tensor::internal
