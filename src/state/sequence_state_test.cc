#include "state/sequence_state.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "tensor/blocks.h"
#include "tensor/value_spans.h"

namespace ds::state {
namespace {

StateLayout HybridLayout() {
  StateLayout layout;
  layout.layer_kinds = {LayerKind::kRecurrent, LayerKind::kAttention, LayerKind::kRecurrent,
                        LayerKind::kAttention};
  layout.kv_row_floats = 6;
  layout.conv_floats = 9;
  layout.ssm_floats = 16;
  layout.max_tokens = 100;
  return layout;
}

float* Keys(SequenceState* state, int layer) {
  return reinterpret_cast<float*>(state->key_rows(layer));
}
float* Values(SequenceState* state, int layer) {
  return reinterpret_cast<float*>(state->value_rows(layer));
}

void FillTokens(SequenceState* state, int64_t count, float base) {
  ASSERT_TRUE(state->Reserve(state->num_tokens() + count).ok());
  for (int layer = 0; layer < 4; ++layer) {
    if (state->layout().layer_kinds[layer] == LayerKind::kAttention) {
      for (int64_t t = state->num_tokens(); t < state->num_tokens() + count; ++t) {
        for (int64_t i = 0; i < 6; ++i) {
          Keys(state, layer)[t * 6 + i] = base + t + 0.1f * i;
          Values(state, layer)[t * 6 + i] = -base - t - 0.1f * i;
        }
      }
    } else {
      for (int64_t i = 0; i < 9; ++i) state->conv_state(layer)[i] = base + i;
      for (int64_t i = 0; i < 16; ++i) state->ssm_state(layer)[i] = base * 2 + i;
    }
  }
  state->Advance(count);
}

TEST(SequenceStateTest, SnapshotRestoreRoundTripIsExact) {
  SequenceState state(HybridLayout());
  FillTokens(&state, 37, 1.5f);
  std::vector<uint8_t> bytes = state.Snapshot();
  EXPECT_EQ(static_cast<int64_t>(bytes.size()), state.SnapshotBytes());

  SequenceState restored(HybridLayout());
  ASSERT_TRUE(restored.Restore(bytes).ok());
  EXPECT_EQ(restored.num_tokens(), 37);
  EXPECT_EQ(restored.Snapshot(), bytes);
}

TEST(SequenceStateTest, RestoreRejectsOtherLayoutAndTruncation) {
  SequenceState state(HybridLayout());
  FillTokens(&state, 5, 2.0f);
  std::vector<uint8_t> bytes = state.Snapshot();

  StateLayout other = HybridLayout();
  other.ssm_floats = 8;
  SequenceState wrong(other);
  EXPECT_FALSE(wrong.Restore(bytes).ok());

  SequenceState target(HybridLayout());
  FillTokens(&target, 3, 7.0f);
  std::vector<uint8_t> before = target.Snapshot();
  std::vector<uint8_t> cut(bytes.begin(), bytes.end() - 4);
  Status status = target.Restore(cut);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("expected"), std::string::npos);
  EXPECT_EQ(target.Snapshot(), before) << "a failed restore must leave the state unchanged";
}

TEST(SequenceStateTest, ReserveRefusesPastContext) {
  SequenceState state(HybridLayout());
  EXPECT_TRUE(state.Reserve(100).ok());
  Status status = state.Reserve(101);
  EXPECT_EQ(status.code(), StatusCode::kOutOfRange);
}

// Growing to the whole context keeps the rows where they are (a decode at depth does not copy
// the cache) and keeps their values.
TEST(SequenceStateTest, ReserveNeverMovesTheRows) {
  SequenceState state(HybridLayout());
  FillTokens(&state, 3, 0.0f);
  const uint8_t* keys = state.key_rows(1);
  const uint8_t* values = state.value_rows(3);
  for (int64_t tokens : {4, 40, 67, 100}) {
    ASSERT_TRUE(state.Reserve(tokens).ok());
    EXPECT_EQ(state.key_rows(1), keys) << tokens;
    EXPECT_EQ(state.value_rows(3), values) << tokens;
  }
  EXPECT_FLOAT_EQ(Keys(&state, 1)[2 * 6 + 1], 2.1f);
  EXPECT_FLOAT_EQ(Values(&state, 3)[2 * 6], -2.0f);
}

TEST(SequenceStateTest, TruncateKeepsPrefixRows) {
  SequenceState state(HybridLayout());
  FillTokens(&state, 10, 0.0f);
  state.TruncateKv(4);
  EXPECT_EQ(state.num_tokens(), 4);
  EXPECT_FLOAT_EQ(Keys(&state, 1)[3 * 6], 3.0f);
  EXPECT_EQ(state.SnapshotBytes(),
            SequenceState::kSnapshotHeaderBytes + (2 * 2 * 4 * 6 + 2 * 25) * 4);
}

TEST(SequenceStateTest, RecurrentOnlySnapshotNeedsMatchingKvPosition) {
  SequenceState state(HybridLayout());
  FillTokens(&state, 6, 1.0f);
  std::vector<uint8_t> recurrent = state.Snapshot(SequenceState::Parts::kRecurrentOnly);
  EXPECT_EQ(static_cast<int64_t>(recurrent.size()),
            state.SnapshotBytes(SequenceState::Parts::kRecurrentOnly));
  FillTokens(&state, 4, 9.0f);

  Status wrong_position = state.Restore(recurrent);
  EXPECT_FALSE(wrong_position.ok());
  EXPECT_NE(wrong_position.message().find("does not match"), std::string::npos);

  state.TruncateKv(6);
  ASSERT_TRUE(state.Restore(recurrent).ok());
  EXPECT_EQ(state.num_tokens(), 6);
  EXPECT_FLOAT_EQ(state.conv_state(0)[0], 1.0f);
  EXPECT_FLOAT_EQ(Keys(&state, 1)[5 * 6], 1.0f + 5);  // KV rows kept from before
}

TEST(SequenceStateTest, KvRowsRebuildTheStatePieceByPiece) {
  SequenceState source(HybridLayout());
  FillTokens(&source, 30, 2.0f);
  std::vector<uint8_t> first(source.KvRowsBytes(16)), rest(source.KvRowsBytes(14));
  source.CopyKvRows(0, 16, first.data());
  source.CopyKvRows(16, 30, rest.data());
  std::vector<uint8_t> recurrent = source.Snapshot(SequenceState::Parts::kRecurrentOnly);

  SequenceState rebuilt(HybridLayout());
  ASSERT_TRUE(rebuilt.AppendKvRows(first, 16, 16).ok());
  // A record holding more rows than needed gives only its first ones (dense partial blocks).
  ASSERT_TRUE(rebuilt.AppendKvRows(rest, 14, 10).ok());
  EXPECT_EQ(rebuilt.num_tokens(), 26);
  ASSERT_TRUE(rebuilt.AppendKvRows(std::span<const uint8_t>(), 0, 0).ok());
  source.TruncateKv(26);
  for (int layer : {1, 3}) {
    for (int64_t i = 0; i < 26 * 6; ++i) {
      ASSERT_EQ(Keys(&rebuilt, layer)[i], Keys(&source, layer)[i]);
      ASSERT_EQ(Values(&rebuilt, layer)[i], Values(&source, layer)[i]);
    }
  }
  EXPECT_FALSE(rebuilt.Restore(recurrent).ok()) << "recurrent state of position 30 at 26";
}

TEST(SequenceStateTest, AppendKvRowsRejectsBadSizesAndOverflow) {
  SequenceState state(HybridLayout());
  std::vector<uint8_t> rows(state.KvRowsBytes(8));
  EXPECT_EQ(state.AppendKvRows(rows, 7, 7).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(state.AppendKvRows(rows, 8, 9).code(), StatusCode::kInvalidArgument);
  FillTokens(&state, 95, 1.0f);
  EXPECT_EQ(state.AppendKvRows(rows, 8, 8).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(state.num_tokens(), 95);
}

StateLayout Q8Layout() {
  StateLayout layout = HybridLayout();
  layout.kv_row_floats = 64;
  layout.k_dtype = layout.v_dtype = tensor::DType::kQ8_0;
  return layout;
}

StateLayout Q4ValueLayout() {
  StateLayout layout = Q8Layout();
  layout.v_dtype = tensor::DType::kQ4_0;
  return layout;
}

TEST(SequenceStateTest, QuantisedKvRowsAreBlocksOf32WithAHalfScale) {
  EXPECT_EQ(Q8Layout().KeyRowBytes(), 2 * 34);
  EXPECT_EQ(Q8Layout().ValueRowBytes(), 2 * 34);
  EXPECT_EQ(Q4ValueLayout().KeyRowBytes(), 2 * 34);
  EXPECT_EQ(Q4ValueLayout().ValueRowBytes(), 2 * 18);
  StateLayout f32 = Q8Layout();
  f32.k_dtype = f32.v_dtype = tensor::DType::kF32;
  EXPECT_EQ(f32.KeyRowBytes(), 64 * 4);
  EXPECT_EQ(f32.ValueRowBytes(), 64 * 4);
}

TEST(SequenceStateTest, Q4ValueSnapshotsRoundTripAndRefuseOtherValueFormats) {
  SequenceState state(Q4ValueLayout());
  ASSERT_TRUE(state.Reserve(9).ok());
  for (int layer : {1, 3}) {
    for (int64_t b = 0; b < 9 * 68; ++b) state.key_rows(layer)[b] = static_cast<uint8_t>(b * 7);
    for (int64_t b = 0; b < 9 * 36; ++b) state.value_rows(layer)[b] = static_cast<uint8_t>(b * 11);
  }
  state.Advance(9);
  const std::vector<uint8_t> bytes = state.Snapshot();
  EXPECT_EQ(static_cast<int64_t>(bytes.size()),
            SequenceState::kSnapshotHeaderBytes + 2 * 9 * (68 + 36) + 2 * 25 * 4);
  SequenceState restored(Q4ValueLayout());
  ASSERT_TRUE(restored.Restore(bytes).ok());
  EXPECT_EQ(restored.Snapshot(), bytes);
  SequenceState eight_bit(Q8Layout());
  const Status status = eight_bit.Restore(bytes);
  EXPECT_NE(status.message().find("another format"), std::string::npos) << status.message();

  std::vector<uint8_t> rows(state.KvRowsBytes(4));
  EXPECT_EQ(rows.size(), 2u * 4 * (68 + 36));
  state.CopyKvRows(2, 6, rows.data());
  SequenceState appended(Q4ValueLayout());
  ASSERT_TRUE(appended.AppendKvRows(rows, 4, 4).ok());
  EXPECT_EQ(0, std::memcmp(appended.key_rows(3), state.key_rows(3) + 2 * 68, 4 * 68));
  EXPECT_EQ(0, std::memcmp(appended.value_rows(3), state.value_rows(3) + 2 * 36, 4 * 36));
}

TEST(SequenceStateTest, Q8SnapshotsRoundTripAndRefuseF32Layouts) {
  SequenceState state(Q8Layout());
  ASSERT_TRUE(state.Reserve(9).ok());
  for (int layer : {1, 3}) {
    for (int64_t b = 0; b < 9 * state.layout().KeyRowBytes(); ++b) {
      state.key_rows(layer)[b] = static_cast<uint8_t>(b * 7 + layer);
      state.value_rows(layer)[b] = static_cast<uint8_t>(b * 11 + layer);
    }
  }
  state.Advance(9);
  const std::vector<uint8_t> bytes = state.Snapshot();
  EXPECT_EQ(static_cast<int64_t>(bytes.size()),
            SequenceState::kSnapshotHeaderBytes + 2 * 2 * 9 * 68 + 2 * 25 * 4);
  SequenceState restored(Q8Layout());
  ASSERT_TRUE(restored.Restore(bytes).ok());
  EXPECT_EQ(restored.Snapshot(), bytes);

  StateLayout f32 = Q8Layout();
  f32.k_dtype = f32.v_dtype = tensor::DType::kF32;
  SequenceState other(f32);
  Status status = other.Restore(bytes);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("another format"), std::string::npos) << status.message();

  // KV rows copied out for the cache come back byte for byte.
  std::vector<uint8_t> rows(state.KvRowsBytes(4));
  state.CopyKvRows(2, 6, rows.data());
  SequenceState appended(Q8Layout());
  ASSERT_TRUE(appended.AppendKvRows(rows, 4, 4).ok());
  std::vector<uint8_t> back(rows.size());
  appended.CopyKvRows(0, 4, back.data());
  EXPECT_EQ(back, rows);
  EXPECT_EQ(0, std::memcmp(appended.value_rows(1), state.value_rows(1) + 2 * 68, 4 * 68));
}

// A layer's V cache of Q8_0 or Q4_0 rows is kept in spans (tensor/value_spans.h); rows leave it
// as rows, in snapshots and for the cache, and enter it from them, across the end of a span.
class ValueSpansStateTest : public ::testing::TestWithParam<tensor::DType> {};

TEST_P(ValueSpansStateTest, ValuesInSpansLeaveAndEnterAsRows) {
  StateLayout layout = Q8Layout();
  layout.v_dtype = GetParam();
  layout.max_tokens = 600;
  layout.span_values = true;
  ASSERT_TRUE(layout.value_shape().spanned());
  const int64_t key_row_bytes = layout.KeyRowBytes();
  const int64_t row_bytes = layout.ValueRowBytes();
  constexpr int64_t kRows = 300;  // past one span
  std::vector<uint8_t> value_rows(static_cast<size_t>(kRows * row_bytes));
  for (size_t i = 0; i < value_rows.size(); ++i) value_rows[i] = static_cast<uint8_t>(i * 11 + 3);
  SequenceState state(layout);
  ASSERT_TRUE(state.Reserve(kRows).ok());
  for (int layer : {1, 3}) {
    tensor::PutValueRows(value_rows.data(), 0, kRows, layout.value_shape(),
                         state.value_rows(layer));
  }
  state.Advance(kRows);
  EXPECT_NE(0, std::memcmp(state.value_rows(1), value_rows.data(), value_rows.size()));

  // The cache's rows: K's of the five positions, then V's.
  std::vector<uint8_t> copied(state.KvRowsBytes(5));
  state.CopyKvRows(250, 255, copied.data());
  EXPECT_EQ(0, std::memcmp(copied.data() + 5 * key_row_bytes,
                           value_rows.data() + 250 * row_bytes, 5 * row_bytes));

  // The snapshot's first layer's V: the rows as they went in.
  const std::vector<uint8_t> snapshot = state.Snapshot();
  const int64_t first_values =
      SequenceState::kSnapshotHeaderBytes + 25 * 4 + kRows * key_row_bytes;  // after layer 0, K
  EXPECT_EQ(0, std::memcmp(snapshot.data() + first_values, value_rows.data(), value_rows.size()));
  SequenceState restored(layout);
  ASSERT_TRUE(restored.Restore(snapshot).ok());
  EXPECT_EQ(restored.Snapshot(), snapshot);
  // A layout that keeps V as rows (another table's) takes the same snapshot.
  StateLayout rows_layout = layout;
  rows_layout.span_values = false;
  SequenceState as_rows(rows_layout);
  ASSERT_TRUE(as_rows.Restore(snapshot).ok());
  EXPECT_EQ(as_rows.Snapshot(), snapshot);
  EXPECT_EQ(0, std::memcmp(as_rows.value_rows(3), value_rows.data(), value_rows.size()));

  // Rows appended at an unaligned position land in their spans.
  SequenceState grown(layout);
  std::vector<uint8_t> head(grown.KvRowsBytes(7)), tail(grown.KvRowsBytes(kRows - 7));
  state.CopyKvRows(0, 7, head.data());
  state.CopyKvRows(7, kRows, tail.data());
  ASSERT_TRUE(grown.AppendKvRows(head, 7, 7).ok());
  ASSERT_TRUE(grown.AppendKvRows(tail, kRows - 7, kRows - 7).ok());
  EXPECT_EQ(grown.Snapshot(), snapshot);
}

INSTANTIATE_TEST_SUITE_P(QuantisedValues, ValueSpansStateTest,
                         ::testing::Values(tensor::DType::kQ8_0, tensor::DType::kQ4_0),
                         [](const auto& info) { return std::string(tensor::DTypeName(info.param)); });

// A layer's K cache of Q8_0 heads of 64 is tiled (tensor/key_tiles.h); rows leave it as rows, in
// snapshots and for the cache, and enter it from them.
TEST(SequenceStateTest, TiledKeysLeaveAndEnterAsRows) {
  StateLayout layout = Q8Layout();
  layout.kv_row_floats = 128;
  layout.n_kv_heads = 2;
  layout.tile_keys = true;
  ASSERT_TRUE(layout.key_shape().tiled());
  const int64_t row_bytes = layout.KeyRowBytes();
  const int64_t n = 21;
  std::vector<uint8_t> key_rows(static_cast<size_t>(n * row_bytes));
  for (size_t i = 0; i < key_rows.size(); ++i) key_rows[i] = static_cast<uint8_t>(i * 13 + 5);
  SequenceState state(layout);
  ASSERT_TRUE(state.Reserve(n).ok());
  for (int layer : {1, 3}) {
    tensor::PutKeyRows(key_rows.data(), 0, n, layout.key_shape(), state.key_rows(layer));
  }
  state.Advance(n);
  EXPECT_NE(0, std::memcmp(state.key_rows(1), key_rows.data(), key_rows.size()));

  std::vector<uint8_t> copied(state.KvRowsBytes(5));
  state.CopyKvRows(14, 19, copied.data());
  EXPECT_EQ(0, std::memcmp(copied.data(), key_rows.data() + 14 * row_bytes, 5 * row_bytes));

  // The snapshot's first layer's K: the rows as they went in.
  const std::vector<uint8_t> snapshot = state.Snapshot();
  const int64_t first_keys = SequenceState::kSnapshotHeaderBytes + 25 * 4;  // after layer 0
  EXPECT_EQ(0, std::memcmp(snapshot.data() + first_keys, key_rows.data(), key_rows.size()));
  SequenceState restored(layout);
  ASSERT_TRUE(restored.Restore(snapshot).ok());
  std::vector<uint8_t> restored_rows(state.KvRowsBytes(n)), state_rows(state.KvRowsBytes(n));
  restored.CopyKvRows(0, n, restored_rows.data());
  state.CopyKvRows(0, n, state_rows.data());
  EXPECT_EQ(restored_rows, state_rows);
  // A layout that keeps K as rows (another table's) takes the same snapshot.
  StateLayout rows_layout = layout;
  rows_layout.tile_keys = false;
  SequenceState untiled(rows_layout);
  ASSERT_TRUE(untiled.Restore(snapshot).ok());
  EXPECT_EQ(untiled.Snapshot(), snapshot);

  // Rows appended at an unaligned position land in their tiles.
  SequenceState grown(layout);
  std::vector<uint8_t> head(grown.KvRowsBytes(7)), tail(grown.KvRowsBytes(14));
  state.CopyKvRows(0, 7, head.data());
  state.CopyKvRows(7, 21, tail.data());
  ASSERT_TRUE(grown.AppendKvRows(head, 7, 7).ok());
  ASSERT_TRUE(grown.AppendKvRows(tail, 14, 14).ok());
  EXPECT_EQ(grown.Snapshot(), snapshot);
}

}  // namespace
}  // namespace ds::state
