// Internal to the kernels library: the activations of a MatMuls call, each distinct input
// encoded once in the form its jobs' kernels read.
// Thread safety: an object is used by one calling thread (its MatMuls) at a time.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/thread_pool.h"
#include "kernels/act_quant.h"
#include "kernels/kernel_table.h"
#include "kernels/kernels.h"

namespace ds::kernels::internal {

// Multiply-adds (or values encoded) per task below which splitting across threads costs more
// than it saves.
inline constexpr int64_t kMinTaskMacs = 1 << 16;

// The table's wide path for a matrix of `type` against n_tokens tokens, or all nulls.
WideQ8Path WidePathFor(const KernelTable& table, tensor::DType type, int64_t n_tokens);

// Activations in the form a weight dtype's kernel reads, built once for every matrix of a call.
struct PreparedActivations {
  const uint8_t* rows = nullptr;   // n_tokens rows of act_stride bytes
  int64_t act_stride = 0;
  const uint8_t* tiles = nullptr;  // interleaved tiles of kMaxTileTokens tokens, or null
  int64_t tile_bytes = 0;
  bool wide = false;
};

// The inputs of one MatMuls call, kept across calls so that their buffers are reused.
class MatMulInputs {
 public:
  // One distinct input of a MatMuls call: x[n_tokens][n_cols] as the jobs that read it need it,
  // or, when gathered, rows x_rows[t] of another input (`source`, an index into the call's inputs)
  // copied from its encoding.
  struct Input {
    const float* x = nullptr;
    int64_t n_cols = 0;
    int64_t n_tokens = 0;
    ActFormat format = ActFormat::kF32;
    bool wide = false;  // read by the table's wide path, which takes the rows as they are
    // Encoded only to be gathered from: rows alone, no tiles or padding.
    bool gather_source = false;
    const int64_t* x_rows = nullptr;
    int64_t source = -1;
    // Read by interleaved weight rows, whose kernel takes the rows as they are: no tiles.
    bool rows_only = false;
  };

  // Finds the distinct inputs of the jobs and encodes each once: its rows in one parallel pass
  // over every input, the rows gathered by index from them in a second and the tiles in a third.
  // Returns false when no job has work (tokens and rows).
  bool Prepare(std::span<const MatMulJob> jobs, ThreadPool* pool);

  // The activations job j reads. REQUIRES: Prepare returned true and job j has work.
  const PreparedActivations& ForJob(size_t j) const { return prepared_[input_of_[j]]; }

 private:
  std::vector<Input> inputs_;
  std::vector<PreparedActivations> prepared_;  // per input
  std::vector<int64_t> input_of_;              // job -> its entry of inputs_
  // Running sums of the rows each input encodes, gathers and tiles (one more entry than inputs).
  std::vector<int64_t> row_starts_, gather_starts_, tile_starts_;
  std::vector<std::vector<uint8_t>> act_buffers_, tile_buffers_;  // per input
};

}  // namespace ds::kernels::internal
