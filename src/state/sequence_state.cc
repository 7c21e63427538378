#include "state/sequence_state.h"

#include <algorithm>
#include <cstring>

#include "base/check.h"

namespace ds::state {
namespace {

constexpr uint32_t kSnapshotMagic = 0x54535344;  // "DSST"
constexpr uint32_t kSnapshotVersion = 1;

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
  // Grow geometrically so a long decode reallocates O(log n) times, never past the context.
  int64_t capacity = std::max<int64_t>(num_tokens, std::min<int64_t>(layout_.max_tokens,
                                                                     capacity_tokens_ * 2 + 64));
  for (size_t i = 0; i < layers_.size(); ++i) {
    if (layout_.layer_kinds[i] != LayerKind::kAttention) continue;
    layers_[i].keys.resize(capacity * layout_.kv_row_floats);
    layers_[i].values.resize(capacity * layout_.kv_row_floats);
  }
  capacity_tokens_ = capacity;
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

bool SequenceState::HasRecurrentLayers() const { return layout_.HasRecurrentLayers(); }

float* SequenceState::keys(int layer) {
  DS_DCHECK(layout_.layer_kinds[layer] == LayerKind::kAttention);
  return layers_[layer].keys.data();
}
float* SequenceState::values(int layer) {
  DS_DCHECK(layout_.layer_kinds[layer] == LayerKind::kAttention);
  return layers_[layer].values.data();
}
const float* SequenceState::keys(int layer) const { return layers_[layer].keys.data(); }
const float* SequenceState::values(int layer) const { return layers_[layer].values.data(); }

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
  return NumAttentionLayers() * 2 * count * layout_.kv_row_floats *
         static_cast<int64_t>(sizeof(float));
}

void SequenceState::CopyKvRows(int64_t begin, int64_t end, uint8_t* out) const {
  DS_CHECK(0 <= begin && begin <= end && end <= num_tokens_);
  if (begin == end) return;  // `out` may be null then, and memcpy must not see it
  const size_t row_bytes = layout_.kv_row_floats * sizeof(float);
  const size_t span_bytes = (end - begin) * row_bytes;
  for (size_t i = 0; i < layers_.size(); ++i) {
    if (layout_.layer_kinds[i] != LayerKind::kAttention) continue;
    std::memcpy(out, layers_[i].keys.data() + begin * layout_.kv_row_floats, span_bytes);
    out += span_bytes;
    std::memcpy(out, layers_[i].values.data() + begin * layout_.kv_row_floats, span_bytes);
    out += span_bytes;
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
  const size_t row_bytes = layout_.kv_row_floats * sizeof(float);
  const uint8_t* cursor = bytes.data();
  for (size_t i = 0; i < layers_.size(); ++i) {
    if (layout_.layer_kinds[i] != LayerKind::kAttention) continue;
    std::memcpy(layers_[i].keys.data() + num_tokens_ * layout_.kv_row_floats, cursor,
                count * row_bytes);
    cursor += record_rows * row_bytes;
    std::memcpy(layers_[i].values.data() + num_tokens_ * layout_.kv_row_floats, cursor,
                count * row_bytes);
    cursor += record_rows * row_bytes;
  }
  num_tokens_ += count;
  return OkStatus();
}

int64_t SequenceState::PayloadFloats(Parts parts, int64_t num_tokens) const {
  int64_t floats = 0;
  for (LayerKind kind : layout_.layer_kinds) {
    if (kind == LayerKind::kRecurrent) {
      floats += layout_.conv_floats + layout_.ssm_floats;
    } else if (parts == Parts::kAll) {
      floats += 2 * num_tokens * layout_.kv_row_floats;
    }
  }
  return floats;
}

int64_t SequenceState::SnapshotBytes(Parts parts) const {
  return static_cast<int64_t>(sizeof(Header)) + PayloadFloats(parts, num_tokens_) * 4;
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
  Header header{kSnapshotMagic,      kSnapshotVersion,   static_cast<int64_t>(layers_.size()),
                layout_.kv_row_floats, layout_.conv_floats, layout_.ssm_floats,
                num_tokens_,          static_cast<int64_t>(parts)};
  AppendBytes(&header, sizeof(header), &out);
  for (size_t i = 0; i < layers_.size(); ++i) {
    const LayerSlots& slots = layers_[i];
    if (layout_.layer_kinds[i] == LayerKind::kRecurrent) {
      AppendFloats(slots.conv.data(), layout_.conv_floats, &out);
      AppendFloats(slots.ssm.data(), layout_.ssm_floats, &out);
    } else if (parts == Parts::kAll) {
      AppendFloats(slots.keys.data(), num_tokens_ * layout_.kv_row_floats, &out);
      AppendFloats(slots.values.data(), num_tokens_ * layout_.kv_row_floats, &out);
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
  int64_t expected = sizeof(Header) + PayloadFloats(parts, header->num_tokens) * 4;
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
  auto take = [&cursor](float* dst, int64_t count) {
    if (count > 0) std::memcpy(dst, cursor, count * sizeof(float));
    cursor += count * sizeof(float);
  };
  for (size_t i = 0; i < layers_.size(); ++i) {
    LayerSlots& slots = layers_[i];
    if (layout_.layer_kinds[i] == LayerKind::kRecurrent) {
      take(slots.conv.data(), layout_.conv_floats);
      take(slots.ssm.data(), layout_.ssm_floats);
    } else if (all) {
      take(slots.keys.data(), num_tokens_ * layout_.kv_row_floats);
      take(slots.values.data(), num_tokens_ * layout_.kv_row_floats);
    }
  }
  return OkStatus();
}

}  // namespace ds::state
