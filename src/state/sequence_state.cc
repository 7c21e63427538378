#include "state/sequence_state.h"

#include <algorithm>
#include <cstring>

#include "base/check.h"

namespace ds::state {
namespace {

constexpr uint32_t kSnapshotMagic = 0x54535344;  // "DSST"

void AppendBytes(const void* src, size_t count, std::vector<uint8_t>* out) {
  size_t old_size = out->size();
  out->resize(old_size + count);
  if (count > 0) std::memcpy(out->data() + old_size, src, count);
}

void AppendFloats(const float* src, int64_t count, std::vector<uint8_t>* out) {
  AppendBytes(src, count * sizeof(float), out);
}

}  // namespace

struct SequenceState::Header {
  uint32_t magic;
  uint32_t version;
  int64_t num_layers;
  int64_t kv_row_floats;
  int64_t conv_floats;
  int64_t ssm_floats;
  int64_t num_tokens;
  int64_t parts;
  int32_t k_dtype;
  int32_t v_dtype;
};

SequenceState::SequenceState(StateLayout layout)
    : layout_(std::move(layout)), layers_(layout_.layer_kinds.size()) {
  static_assert(sizeof(Header) == kSnapshotHeaderBytes);
  for (size_t i = 0; i < layers_.size(); ++i) {
    if (layout_.layer_kinds[i] == LayerKind::kRecurrent) {
      layers_[i].conv.assign(layout_.conv_floats, 0.0f);
      layers_[i].ssm.assign(layout_.ssm_floats, 0.0f);
    }
  }
}

Status SequenceState::Reserve(int64_t num_tokens) {
  if (num_tokens > layout_.max_tokens) {
    return OutOfRangeError("sequence of " + std::to_string(num_tokens) +
                           " tokens exceeds the context size of " +
                           std::to_string(layout_.max_tokens));
  }
  if (num_tokens <= capacity_tokens_) return OkStatus();
  // Room for the whole context is taken once, and pages are committed only as rows are written
  // (LargeBufferAllocator does not zero what a vector grows by), so the rows never move and
  // growing costs nothing: grown by reallocation, a decode step at depth 32k on the bench model
  // copied 107 MB of rows and the kernel zeroed the new buffers (4.4% of the samples of a decode
  // at that depth; tg32 at depth 32k rose 1.59x, median of three interleaved pairs).
  const tensor::KeyShape key_shape = layout_.key_shape();
  const auto key_bytes = [&](int64_t tokens) {
    return static_cast<size_t>(key_shape.CacheBytes(tokens));
  };
  const tensor::ValueShape value_shape = layout_.value_shape();
  const auto value_bytes = [&](int64_t tokens) {
    return static_cast<size_t>(value_shape.CacheBytes(tokens));
  };
  for (size_t i = 0; i < layers_.size(); ++i) {
    if (layout_.layer_kinds[i] != LayerKind::kAttention) continue;
    KvRows& keys = layers_[i].keys;
    KvRows& values = layers_[i].values;
    if (capacity_tokens_ == 0) {
      keys.reserve(key_bytes(layout_.max_tokens));
      values.reserve(value_bytes(layout_.max_tokens));
    }
    keys.resize(key_bytes(num_tokens));
    values.resize(value_bytes(num_tokens));
  }
  capacity_tokens_ = num_tokens;
  return OkStatus();
}

void SequenceState::Advance(int64_t count) {
  DS_CHECK(!HasAttentionLayers() || num_tokens_ + count <= capacity_tokens_);
  num_tokens_ += count;
}

bool SequenceState::HasAttentionLayers() const {
  return std::find(layout_.layer_kinds.begin(), layout_.layer_kinds.end(),
                   LayerKind::kAttention) != layout_.layer_kinds.end();
}

bool StateLayout::HasRecurrentLayers() const {
  return std::find(layer_kinds.begin(), layer_kinds.end(), LayerKind::kRecurrent) !=
         layer_kinds.end();
}

int64_t StateLayout::KeyRowBytes() const { return key_shape().row_bytes(); }

int64_t StateLayout::ValueRowBytes() const { return value_shape().row_bytes(); }

tensor::KeyShape StateLayout::key_shape() const {
  return {k_dtype, n_kv_heads, kv_row_floats / n_kv_heads, tile_keys};
}

tensor::ValueShape StateLayout::value_shape() const {
  return {v_dtype, n_kv_heads, kv_row_floats / n_kv_heads, span_values};
}

bool SequenceState::HasRecurrentLayers() const { return layout_.HasRecurrentLayers(); }

uint8_t* SequenceState::key_rows(int layer) {
  DS_DCHECK(layout_.layer_kinds[layer] == LayerKind::kAttention);
  return layers_[layer].keys.data();
}
uint8_t* SequenceState::value_rows(int layer) {
  DS_DCHECK(layout_.layer_kinds[layer] == LayerKind::kAttention);
  return layers_[layer].values.data();
}
const uint8_t* SequenceState::key_rows(int layer) const { return layers_[layer].keys.data(); }
const uint8_t* SequenceState::value_rows(int layer) const { return layers_[layer].values.data(); }

float* SequenceState::conv_state(int layer) {
  DS_DCHECK(layout_.layer_kinds[layer] == LayerKind::kRecurrent);
  return layers_[layer].conv.data();
}
float* SequenceState::ssm_state(int layer) {
  DS_DCHECK(layout_.layer_kinds[layer] == LayerKind::kRecurrent);
  return layers_[layer].ssm.data();
}

void SequenceState::TruncateKv(int64_t num_tokens) {
  DS_CHECK(num_tokens >= 0 && num_tokens <= num_tokens_);
  num_tokens_ = num_tokens;
}

void SequenceState::Clear() {
  num_tokens_ = 0;
  for (auto& slots : layers_) {
    std::fill(slots.conv.begin(), slots.conv.end(), 0.0f);
    std::fill(slots.ssm.begin(), slots.ssm.end(), 0.0f);
  }
}

int64_t SequenceState::NumAttentionLayers() const {
  return std::count(layout_.layer_kinds.begin(), layout_.layer_kinds.end(),
                    LayerKind::kAttention);
}

int64_t SequenceState::KvRowsBytes(int64_t count) const {
  return NumAttentionLayers() * count * (layout_.KeyRowBytes() + layout_.ValueRowBytes());
}

void SequenceState::CopyKvRows(int64_t begin, int64_t end, uint8_t* out) const {
  DS_CHECK(0 <= begin && begin <= end && end <= num_tokens_);
  if (begin == end) return;  // `out` may be null then, and memcpy must not see it
  const int64_t count = end - begin;
  for (size_t i = 0; i < layers_.size(); ++i) {
    if (layout_.layer_kinds[i] != LayerKind::kAttention) continue;
    tensor::GetKeyRows(layers_[i].keys.data(), begin, count, layout_.key_shape(), out);
    out += count * layout_.KeyRowBytes();
    tensor::GetValueRows(layers_[i].values.data(), begin, count, layout_.value_shape(), out);
    out += count * layout_.ValueRowBytes();
  }
}

Status SequenceState::AppendKvRows(std::span<const uint8_t> bytes, int64_t record_rows,
                                   int64_t count) {
  if (count < 0 || count > record_rows ||
      static_cast<int64_t>(bytes.size()) != KvRowsBytes(record_rows)) {
    return InvalidArgumentError("KV rows of " + std::to_string(bytes.size()) +
                                " bytes do not hold " + std::to_string(record_rows) +
                                " rows of this layout");
  }
  if (count == 0) return OkStatus();  // `bytes` may be empty and null
  DS_RETURN_IF_ERROR(Reserve(num_tokens_ + count));
  const uint8_t* cursor = bytes.data();
  for (size_t i = 0; i < layers_.size(); ++i) {
    if (layout_.layer_kinds[i] != LayerKind::kAttention) continue;
    tensor::PutKeyRows(cursor, num_tokens_, count, layout_.key_shape(), layers_[i].keys.data());
    cursor += record_rows * layout_.KeyRowBytes();
    tensor::PutValueRows(cursor, num_tokens_, count, layout_.value_shape(),
                         layers_[i].values.data());
    cursor += record_rows * layout_.ValueRowBytes();
  }
  num_tokens_ += count;
  return OkStatus();
}

int64_t SequenceState::PayloadBytes(Parts parts, int64_t num_tokens) const {
  int64_t bytes = 0;
  for (LayerKind kind : layout_.layer_kinds) {
    if (kind == LayerKind::kRecurrent) {
      bytes += (layout_.conv_floats + layout_.ssm_floats) * static_cast<int64_t>(sizeof(float));
    } else if (parts == Parts::kAll) {
      bytes += num_tokens * (layout_.KeyRowBytes() + layout_.ValueRowBytes());
    }
  }
  return bytes;
}

int64_t SequenceState::SnapshotBytes(Parts parts) const {
  return static_cast<int64_t>(sizeof(Header)) + PayloadBytes(parts, num_tokens_);
}

std::vector<uint8_t> SequenceState::Snapshot(Parts parts) const {
  std::vector<uint8_t> out;
  SnapshotTo(parts, &out);
  return out;
}

void SequenceState::SnapshotTo(Parts parts, std::vector<uint8_t>* out_bytes) const {
  std::vector<uint8_t>& out = *out_bytes;
  out.clear();
  out.reserve(SnapshotBytes(parts));
  Header header{kSnapshotMagic,
                kSnapshotVersion,
                static_cast<int64_t>(layers_.size()),
                layout_.kv_row_floats,
                layout_.conv_floats,
                layout_.ssm_floats,
                num_tokens_,
                static_cast<int64_t>(parts),
                static_cast<int32_t>(layout_.k_dtype),
                static_cast<int32_t>(layout_.v_dtype)};
  AppendBytes(&header, sizeof(header), &out);
  for (size_t i = 0; i < layers_.size(); ++i) {
    const LayerSlots& slots = layers_[i];
    if (layout_.layer_kinds[i] == LayerKind::kRecurrent) {
      AppendFloats(slots.conv.data(), layout_.conv_floats, &out);
      AppendFloats(slots.ssm.data(), layout_.ssm_floats, &out);
    } else if (parts == Parts::kAll) {
      // K's rows, then V's.
      const size_t keys_at = out.size();
      const size_t values_at = keys_at + num_tokens_ * layout_.KeyRowBytes();
      out.resize(values_at + num_tokens_ * layout_.ValueRowBytes());
      tensor::GetKeyRows(slots.keys.data(), 0, num_tokens_, layout_.key_shape(),
                         out.data() + keys_at);
      tensor::GetValueRows(slots.values.data(), 0, num_tokens_, layout_.value_shape(),
                           out.data() + values_at);
    }
  }
}

Status SequenceState::CheckHeader(std::span<const uint8_t> bytes, Header* header) const {
  if (bytes.size() < sizeof(Header)) return InvalidArgumentError("snapshot shorter than header");
  std::memcpy(header, bytes.data(), sizeof(Header));
  if (header->magic != kSnapshotMagic || header->version != kSnapshotVersion) {
    return InvalidArgumentError("snapshot has an unknown magic or version");
  }
  if (header->num_layers != static_cast<int64_t>(layers_.size()) ||
      header->kv_row_floats != layout_.kv_row_floats ||
      header->conv_floats != layout_.conv_floats || header->ssm_floats != layout_.ssm_floats) {
    return InvalidArgumentError("snapshot was taken for a different model layout");
  }
  if (header->k_dtype != static_cast<int32_t>(layout_.k_dtype) ||
      header->v_dtype != static_cast<int32_t>(layout_.v_dtype)) {
    return InvalidArgumentError("snapshot stores KV rows in another format");
  }
  if (header->parts != static_cast<int64_t>(Parts::kAll) &&
      header->parts != static_cast<int64_t>(Parts::kRecurrentOnly)) {
    return InvalidArgumentError("snapshot holds an unknown kind of parts");
  }
  if (header->num_tokens < 0 || header->num_tokens > layout_.max_tokens) {
    return InvalidArgumentError("snapshot position " + std::to_string(header->num_tokens) +
                                " is outside the context");
  }
  auto parts = static_cast<Parts>(header->parts);
  if (parts == Parts::kRecurrentOnly && header->num_tokens != num_tokens_) {
    return InvalidArgumentError("recurrent snapshot at position " +
                                std::to_string(header->num_tokens) +
                                " does not match the KV held for " + std::to_string(num_tokens_) +
                                " tokens");
  }
  int64_t expected = sizeof(Header) + PayloadBytes(parts, header->num_tokens);
  if (static_cast<int64_t>(bytes.size()) != expected) {
    return InvalidArgumentError("snapshot holds " + std::to_string(bytes.size()) +
                                " bytes, expected " + std::to_string(expected));
  }
  return OkStatus();
}

Status SequenceState::Restore(std::span<const uint8_t> bytes) {
  Header header;
  DS_RETURN_IF_ERROR(CheckHeader(bytes, &header));
  const bool all = header.parts == static_cast<int64_t>(Parts::kAll);
  if (all) DS_RETURN_IF_ERROR(Reserve(header.num_tokens));
  num_tokens_ = header.num_tokens;
  const uint8_t* cursor = bytes.data() + sizeof(header);
  auto take = [&cursor](void* dst, int64_t bytes) {
    if (bytes > 0) std::memcpy(dst, cursor, bytes);
    cursor += bytes;
  };
  for (size_t i = 0; i < layers_.size(); ++i) {
    LayerSlots& slots = layers_[i];
    if (layout_.layer_kinds[i] == LayerKind::kRecurrent) {
      take(slots.conv.data(), layout_.conv_floats * static_cast<int64_t>(sizeof(float)));
      take(slots.ssm.data(), layout_.ssm_floats * static_cast<int64_t>(sizeof(float)));
    } else if (all) {
      tensor::PutKeyRows(cursor, 0, num_tokens_, layout_.key_shape(), slots.keys.data());
      cursor += num_tokens_ * layout_.KeyRowBytes();
      tensor::PutValueRows(cursor, 0, num_tokens_, layout_.value_shape(), slots.values.data());
      cursor += num_tokens_ * layout_.ValueRowBytes();
    }
  }
  return OkStatus();
}

}  // namespace ds::state
