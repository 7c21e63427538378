// Per-sequence inference state: attention KV for every attention layer plus, for hybrid models,
// the recurrent slots (conv tail and delta-rule matrix S) of every linear-attention layer.
//
// Attention KV for tokens [0, num_tokens()) can be truncated to any prefix; recurrent slots hold
// the state at exactly num_tokens() and cannot be rewound, which is why Snapshot() exists.
// Snapshot() serialises everything to plain bytes; Restore() accepts only bytes produced for the
// same layout and reports a mismatch as a Status.
// Thread safety: none; a sequence belongs to one engine thread.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/large_buffer.h"
#include "base/status.h"
#include "tensor/dtype.h"
#include "tensor/key_tiles.h"
#include "tensor/value_spans.h"

namespace ds::state {

enum class LayerKind { kAttention, kRecurrent };

struct StateLayout {
  std::vector<LayerKind> layer_kinds;  // one per model layer
  int64_t kv_row_floats = 0;   // n_kv_heads * head_dim elements, for K and for V of one token
  int64_t n_kv_heads = 1;      // heads of a row: K rows may be tiled per head
  bool tile_keys = false;      // K caches as tiles where their shape allows (tensor/key_tiles.h)
  bool span_values = false;    // V caches in spans where their shape allows (value_spans.h)
  int64_t conv_floats = 0;     // (conv_kernel - 1) * conv_channels per recurrent layer
  int64_t ssm_floats = 0;      // n_value_heads * dv * dk per recurrent layer
  int64_t max_tokens = 0;      // context size
  // How K rows are stored: kF32, or kQ8_0 (GGUF blocks of 32 with an fp16 scale, about 3.6x
  // smaller); V rows: kF32, kQ8_0 or kQ4_0 (blocks of 32 4-bit codes and an fp16 scale, 7.1x
  // smaller). Quantised rows REQUIRE head_dim % 32 == 0, so that every head owns whole blocks.
  tensor::DType k_dtype = tensor::DType::kF32;
  tensor::DType v_dtype = tensor::DType::kF32;

  bool operator==(const StateLayout&) const = default;
  bool HasRecurrentLayers() const;
  // Bytes of one token's K (V) row of one attention layer.
  int64_t KeyRowBytes() const;
  int64_t ValueRowBytes() const;
  // How a layer's K cache is laid out (tensor/key_tiles.h).
  tensor::KeyShape key_shape() const;
  // How a layer's V cache is laid out (tensor/value_spans.h).
  tensor::ValueShape value_shape() const;
};

class SequenceState {
 public:
  explicit SequenceState(StateLayout layout);

  const StateLayout& layout() const { return layout_; }
  int64_t num_tokens() const { return num_tokens_; }

  // Makes room for KV rows up to `num_tokens` tokens. OutOfRange past layout().max_tokens.
  Status Reserve(int64_t num_tokens);
  // Marks `count` more tokens as processed. REQUIRES: Reserve(num_tokens() + count) succeeded.
  void Advance(int64_t count);

  // K and V of attention layer `layer`, as layout().key_shape() and value_shape() lay them out
  // (K tiled or rows, V in spans or rows). Valid as long as the state: Reserve() never moves
  // them. REQUIRES: layer_kinds[layer] == kAttention.
  uint8_t* key_rows(int layer);
  uint8_t* value_rows(int layer);
  const uint8_t* key_rows(int layer) const;
  const uint8_t* value_rows(int layer) const;

  // Recurrent slots of linear layer `layer`. REQUIRES: layer_kinds[layer] == kRecurrent.
  float* conv_state(int layer);
  float* ssm_state(int layer);

  // Drops KV past `num_tokens`. Only valid when the model has no recurrent layers, or when the
  // caller restores recurrent slots for that position right after (a snapshot taken there).
  // REQUIRES: num_tokens <= num_tokens().
  void TruncateKv(int64_t num_tokens);
  // Zeroes everything and forgets all tokens.
  void Clear();
  bool HasRecurrentLayers() const;
  bool HasAttentionLayers() const;

  // KV rows as plain bytes, for a cache that stores attention KV per block of tokens. Layout of
  // `count` rows: for each attention layer in order, its K rows then its V rows (rows whatever
  // the caches' layouts).
  int64_t KvRowsBytes(int64_t count) const;
  // Writes rows [begin, end) to `out` (KvRowsBytes(end - begin) bytes).
  // REQUIRES: 0 <= begin <= end <= num_tokens().
  void CopyKvRows(int64_t begin, int64_t end, uint8_t* out) const;
  // Appends the first `count` of the `record_rows` rows held in `bytes` (laid out as above) at
  // num_tokens() and advances past them. InvalidArgument when the sizes disagree, OutOfRange past
  // the context; the state is unchanged on error.
  Status AppendKvRows(std::span<const uint8_t> bytes, int64_t record_rows, int64_t count);

  // Snapshot bytes before the payload (the slots in layer order: KV as rows, recurrent slots as
  // f32).
  static constexpr int64_t kSnapshotHeaderBytes = 64;
  // Of the header's format (2: it holds the KV dtype; 3: K's and V's).
  static constexpr uint32_t kSnapshotVersion = 3;

  // What a snapshot holds: everything, or only the recurrent slots (for a cache that keeps
  // attention KV per block and needs the non-rewindable part at chosen positions).
  enum class Parts { kAll, kRecurrentOnly };

  // Bytes Snapshot() produces for the current position: header, KV rows, recurrent slots.
  int64_t SnapshotBytes(Parts parts = Parts::kAll) const;
  std::vector<uint8_t> Snapshot(Parts parts = Parts::kAll) const;
  // Snapshot() into `out`, reusing its storage (a decode loop keeping recent states).
  void SnapshotTo(Parts parts, std::vector<uint8_t>* out) const;
  // kAll: replaces this state with the snapshot's. kRecurrentOnly: replaces the recurrent slots,
  // and REQUIRES that the state already holds KV for exactly the snapshot's position (e.g. after
  // TruncateKv to it). InvalidArgument when the bytes were made for another layout, the other
  // part kind or another position, or are truncated; the state is unchanged on error.
  Status Restore(std::span<const uint8_t> bytes);

 private:
  // Every decode step reads a layer's KV rows whole (see base/large_buffer.h).
  using KvRows = std::vector<uint8_t, LargeBufferAllocator<uint8_t>>;
  struct LayerSlots {
    KvRows keys;
    KvRows values;
    std::vector<float> conv;
    std::vector<float> ssm;
  };

  struct Header;
  Status CheckHeader(std::span<const uint8_t> bytes, Header* header) const;
  int64_t PayloadBytes(Parts parts, int64_t num_tokens) const;
  int64_t NumAttentionLayers() const;

  StateLayout layout_;
  int64_t num_tokens_ = 0;
  int64_t capacity_tokens_ = 0;
  std::vector<LayerSlots> layers_;
};

}  // namespace ds::state
