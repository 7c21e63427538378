// The walk behind a decode step's stream of K and V bytes (simd/kv_stream.inc says why it
// exists): while a block of positions computes, the next block's bytes are asked for, a cache
// line at a time, at a pace set by the block's work. A class template over the instruction that
// asks for a line, so that each kernel table instantiates its own copy (see
// x86/table_unit.inc: the tables' units call no inline function of a shared header) and tests can
// record the lines instead.
#pragma once

#include <cstdint>

namespace ds::kernels::internal {

inline constexpr int64_t kStreamLineBytes = 64;

// `count` runs of `bytes` bytes, `stride_bytes` apart, from `first` on.
struct StreamRuns {
  const uint8_t* first = nullptr;
  int64_t stride_bytes = 0;
  int64_t count = 0;
  int64_t bytes = 0;
};

// AskForLine: a callable taking the address of a cache line.
template <class AskForLine>
class KvStream {
 public:
  KvStream() = default;
  explicit KvStream(AskForLine ask_for_line) : ask_for_line_(ask_for_line) {}

  // Starts a block whose work is `work` units (Advance's), during which the lines of k, then of
  // v, then of v_scales (the scales of a V cache in spans, tensor/value_spans.h), the next
  // block's bytes, are asked for at an even pace, each line of a run once.
  void Begin(const StreamRuns& k, const StreamRuns& v, const StreamRuns& v_scales, float work) {
    runs_[0] = Merged(k);
    runs_[1] = Merged(v);
    runs_[2] = Merged(v_scales);
    run_ = 0;
    index_ = -1;
    credit_ = 0;
    int64_t all_lines = 0;
    for (const StreamRuns& runs : runs_) all_lines += LinesOf(runs);
    const auto lines = static_cast<float>(all_lines);
    credit_per_unit_ = work > 0.0f ? lines / work * static_cast<float>(kLineCredit) : 0.0f;
    if (!NextRun()) credit_per_unit_ = 0.0f;
  }

  // `units` of the block's work are done: asks for the lines that fall due. The credit is kept
  // in integers: a float credit took a subtraction and a comparison in the vector unit for every
  // line, beside the attention kernels that keep that unit busy.
  void Advance(float units) {
    credit_ += static_cast<int64_t>(units * credit_per_unit_);
    for (; credit_ >= kLineCredit; credit_ -= kLineCredit) {
      if (line_ > end_line_ && !NextRun()) {
        credit_ = 0;
        credit_per_unit_ = 0.0f;
        return;
      }
      ask_for_line_(reinterpret_cast<const void*>(line_));
      line_ += kStreamLineBytes;
    }
  }

 private:
  static uintptr_t LineOf(const uint8_t* p) {
    return reinterpret_cast<uintptr_t>(p) & ~static_cast<uintptr_t>(kStreamLineBytes - 1);
  }
  // Adjacent runs as one.
  static StreamRuns Merged(const StreamRuns& runs) {
    if (runs.stride_bytes != runs.bytes || runs.count <= 1) return runs;
    return {runs.first, runs.bytes * runs.count, 1, runs.bytes * runs.count};
  }
  // The lines the runs touch: the first run's times their count (the others' may straddle one
  // more or one less, which moves only the pace).
  static int64_t LinesOf(const StreamRuns& runs) {
    if (runs.count == 0 || runs.bytes == 0) return 0;
    const auto first_run = static_cast<int64_t>(LineOf(runs.first + runs.bytes - 1) -
                                                LineOf(runs.first)) / kStreamLineBytes + 1;
    return first_run * runs.count;
  }
  // Moves to the next run of bytes; false when none is left.
  bool NextRun() {
    while (run_ < kRunSets) {
      const StreamRuns& runs = runs_[run_];
      if (++index_ < runs.count && runs.bytes > 0) {
        const uint8_t* start = runs.first + index_ * runs.stride_bytes;
        line_ = LineOf(start);
        end_line_ = LineOf(start + runs.bytes - 1);
        return true;
      }
      ++run_;
      index_ = -1;
    }
    return false;
  }

  static constexpr int kRunSets = 3;
  AskForLine ask_for_line_{};
  StreamRuns runs_[kRunSets];
  int run_ = kRunSets;
  int64_t index_ = -1;
  uintptr_t line_ = 0, end_line_ = 0;  // the next line to ask for, the run's last
  // Lines due and not yet asked for, in 1/kLineCredit of a line.
  static constexpr int64_t kLineCredit = int64_t{1} << 16;
  int64_t credit_ = 0;
  float credit_per_unit_ = 0.0f;
};

}  // namespace ds::kernels::internal
