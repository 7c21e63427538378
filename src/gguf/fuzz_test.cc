// Mutation fuzzing of the GGUF reader with a fixed seed. Thousands of corrupted variants of the
// real stories260K.gguf and of a writer-made file holding every value type must each parse to ok
// or to an error; an ok parse must keep every tensor's data inside the buffer. The binary is
// separate so that a sanitizer build (DS_SANITIZE=ON) can run just it, turning any out-of-bounds
// read, overflow or leak into a failure.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "gguf/test_util.h"

namespace ds::gguf {
namespace {

// Touches every value and getter so that a parse result that is only half valid would show.
void TouchMetadata(const File& file) {
  for (const auto& [key, value] : file.metadata()) {
    (void)file.GetString(key);
    (void)file.GetUint(key);
    (void)file.GetInt(key);
    (void)file.GetFloat(key);
    (void)file.GetBool(key);
    (void)file.GetArray(key);
    (void)testing::Describe(value).size();
  }
}

struct Outcome {
  bool parsed = false;
  std::string problem;  // empty unless the reader misbehaved
};

// Parses `bytes`: a clean error or a File whose tensors all lie inside `bytes` is fine.
Outcome CheckParse(std::span<const uint8_t> bytes) {
  StatusOr<std::unique_ptr<File>> parsed = File::FromBuffer(bytes, "fuzz.gguf");
  if (!parsed.ok()) {
    const Status& status = parsed.status();
    if (status.message().rfind("fuzz.gguf: ", 0) != 0) {
      return {false, "error without the file name: " + status.message()};
    }
    if (status.code() != StatusCode::kInvalidArgument &&
        status.code() != StatusCode::kUnimplemented) {
      return {false, "unexpected code: " + status.ToString()};
    }
    return {false, ""};
  }
  const File& file = **parsed;
  const uint8_t* begin = bytes.data();
  const uint8_t* end = bytes.data() + bytes.size();
  for (const TensorInfo& t : file.tensors()) {
    if (t.data < begin || t.data > end || t.size_bytes > static_cast<uint64_t>(end - t.data)) {
      return {true, "tensor '" + t.name + "' data outside the buffer"};
    }
    if (t.data != begin + file.data_offset() + t.offset || t.offset % file.alignment() != 0) {
      return {true, "tensor '" + t.name + "' misplaced"};
    }
    const auto expected_bytes =
        static_cast<uint64_t>(tensor::RowBytes(t.type, t.ne[0]) * t.num_rows());
    if (t.size_bytes != expected_bytes) return {true, "tensor '" + t.name + "' wrong size"};
    if (file.FindTensor(t.name) != &t) return {true, "tensor '" + t.name + "' not indexed"};
  }
  TouchMetadata(file);
  return {true, ""};
}

// One input to mutate, with the region the parser reads before tensor data: most mutations
// land there, because mutating tensor bytes cannot change what the parser does.
struct Seed {
  std::vector<uint8_t> bytes;
  size_t header_bytes = 0;
  std::vector<size_t> u64_fields;  // where a u64 in [1, size] sits: likely counts, lengths, dims
  std::vector<size_t> u32_fields;  // where a u32 <= 64 sits: likely types and n_dims
};

Seed MakeSeed(std::vector<uint8_t> bytes) {
  Seed seed;
  seed.bytes = std::move(bytes);
  StatusOr<std::unique_ptr<File>> file = File::FromBuffer(seed.bytes, "seed");
  EXPECT_TRUE(file.ok()) << file.status().ToString();
  seed.header_bytes = file.ok() ? (*file)->data_offset() : seed.bytes.size();
  for (size_t p = 0; p + 8 <= seed.header_bytes; ++p) {
    uint64_t v64 = 0;
    std::memcpy(&v64, seed.bytes.data() + p, 8);
    if (v64 >= 1 && v64 <= seed.bytes.size()) seed.u64_fields.push_back(p);
    uint32_t v32 = 0;
    std::memcpy(&v32, seed.bytes.data() + p, 4);
    if (v32 <= 64) seed.u32_fields.push_back(p);
  }
  return seed;
}

class Mutator {
 public:
  enum Kind { kFlip, kU64, kU32, kTruncate, kInsert, kErase, kCombined, kNumKinds };

  explicit Mutator(const Seed& seed) : seed_(seed), work_(seed.bytes) {
    scratch_.reserve(seed.bytes.size() + 16);
  }

  // Runs `iterations` mutations of each kind, but inserts and erasures (which copy the whole seed)
  // only every `copy_every`-th iteration; returns the first problem found, or "".
  std::string Run(int iterations, int copy_every) {
    for (int i = 0; i < iterations; ++i) {
      for (int kind = 0; kind < kNumKinds; ++kind) {
        if ((kind == kInsert || kind == kErase) && i % copy_every != 0) continue;
        const Outcome outcome = MutateAndCheck(static_cast<Kind>(kind));
        ++(outcome.parsed ? num_ok_ : num_errors_)[kind];
        if (!outcome.problem.empty()) {
          return outcome.problem + " (mutation kind " + std::to_string(kind) + ", iteration " +
                 std::to_string(i) + ")";
        }
      }
    }
    return "";
  }

  int num_ok(Kind kind) const { return num_ok_[kind]; }
  int num_errors(Kind kind) const { return num_errors_[kind]; }

 private:
  uint64_t Uniform(uint64_t lo, uint64_t hi) {  // inclusive
    return std::uniform_int_distribution<uint64_t>(lo, hi)(rng_);
  }
  // Mostly inside the metadata and tensor infos, sometimes anywhere.
  size_t Position() {
    const size_t limit = Uniform(0, 9) == 0 ? seed_.bytes.size() : seed_.header_bytes;
    return static_cast<size_t>(Uniform(0, limit - 1));
  }
  uint64_t InterestingU64() {
    const uint64_t size = seed_.bytes.size();
    const uint64_t choices[] = {0,
                                1,
                                2,
                                31,
                                32,
                                0x7fffffff,
                                0xffffffff,
                                0x100000000,
                                INT64_MAX,
                                UINT64_MAX,
                                UINT64_MAX - 7,
                                size,
                                size + 1,
                                size / 2,
                                rng_(),
                                Uniform(0, 2 * size)};
    return choices[Uniform(0, std::size(choices) - 1)];
  }
  uint32_t InterestingU32() {
    const uint32_t choices[] = {0,  1,  2,  3,  4,  5,  7,          8,         9,
                                10, 12, 13, 28, 30, 99, 0x03000000, 0xffffffff};
    return choices[Uniform(0, std::size(choices) - 1)];
  }

  void Overwrite(size_t position, const void* value, size_t n) {
    if (position + n > work_.size()) return;
    touched_.push_back({position, n});
    std::memcpy(work_.data() + position, value, n);
  }

  void MutateInPlace(Kind kind) {
    if (kind == kFlip) {
      const size_t position = Position();
      const auto flipped = static_cast<uint8_t>(work_[position] ^ Uniform(1, 255));
      Overwrite(position, &flipped, 1);
    } else if (kind == kU64 && !seed_.u64_fields.empty()) {
      const uint64_t value = InterestingU64();
      Overwrite(seed_.u64_fields[Uniform(0, seed_.u64_fields.size() - 1)], &value, 8);
    } else if (kind == kU32 && !seed_.u32_fields.empty()) {
      const uint32_t value = InterestingU32();
      Overwrite(seed_.u32_fields[Uniform(0, seed_.u32_fields.size() - 1)], &value, 4);
    }
  }

  Outcome InsertOrErase(Kind kind) {
    // Reuses one buffer: a fresh megabyte per mutation is slow under AddressSanitizer.
    std::vector<uint8_t>& copy = scratch_;
    copy.assign(work_.begin(), work_.end());
    const size_t position = Position();
    const size_t n = Uniform(1, 16);
    if (kind == kInsert) {
      std::vector<uint8_t> noise(n);
      for (uint8_t& b : noise) b = static_cast<uint8_t>(rng_());
      copy.insert(copy.begin() + position, noise.begin(), noise.end());
    } else {
      copy.erase(copy.begin() + position, copy.begin() + std::min(copy.size(), position + n));
    }
    return CheckParse(copy);
  }

  Outcome MutateAndCheck(Kind kind) {
    if (kind == kTruncate) {
      const size_t length = Uniform(0, 3) == 0 ? Uniform(0, work_.size()) : Position();
      return CheckParse(std::span(work_).first(length));
    }
    if (kind == kInsert || kind == kErase) return InsertOrErase(kind);
    const int rounds = kind == kCombined ? static_cast<int>(Uniform(2, 6)) : 1;
    for (int r = 0; r < rounds; ++r) {
      MutateInPlace(kind == kCombined ? static_cast<Kind>(Uniform(kFlip, kU32)) : kind);
    }
    Outcome outcome = CheckParse(work_);
    // Undo only what changed: copying the whole seed back would dominate the run time.
    for (const auto& [position, n] : touched_) {
      std::memcpy(work_.data() + position, seed_.bytes.data() + position, n);
    }
    touched_.clear();
    return outcome;
  }

  const Seed& seed_;
  std::vector<uint8_t> work_;
  std::vector<uint8_t> scratch_;                    // work_ with bytes inserted or erased
  std::vector<std::pair<size_t, size_t>> touched_;  // (position, bytes) overwritten in work_
  std::mt19937_64 rng_{20261129};
  int num_ok_[kNumKinds] = {};
  int num_errors_[kNumKinds] = {};
};

// Cuts the seed at every offset of its first KiB and of the last 2 KiB before the data section
// (tensor infos and padding), at every 13th offset between, and at a sample of longer lengths.
std::string CheckTruncations(const Seed& seed) {
  for (size_t length = 0; length <= seed.bytes.size(); ++length) {
    const bool dense =
        length < 1024 || (length + 2048 > seed.header_bytes && length <= seed.header_bytes + 64);
    const bool sparse = length <= seed.header_bytes ? length % 13 == 0 : length % 4099 == 0;
    if (!dense && !sparse) continue;
    const Outcome outcome = CheckParse(std::span(seed.bytes).first(length));
    if (!outcome.problem.empty()) {
      return outcome.problem + " (truncated to " + std::to_string(length) + " bytes)";
    }
    // Cut inside the tensor infos or before the data section: the tensors cannot be there.
    if (outcome.parsed && length <= seed.header_bytes) {
      return "a truncation to " + std::to_string(length) + " bytes parsed";
    }
  }
  return "";
}

void ExpectBothOutcomes(const Mutator& mutator) {
  // Each kind must sometimes be rejected; in-place kinds must also sometimes still parse, or the
  // mutations never reach the later stages of the parser.
  for (int kind = 0; kind < Mutator::kNumKinds; ++kind) {
    const auto k = static_cast<Mutator::Kind>(kind);
    EXPECT_GT(mutator.num_errors(k), 0) << "kind " << kind;
    if (k == Mutator::kFlip || k == Mutator::kU64 || k == Mutator::kU32) {
      EXPECT_GT(mutator.num_ok(k), 0) << "kind " << kind;
    }
  }
}

TEST(GgufFuzzTest, WriterFileWithEveryValueType) {
  const Seed seed = MakeSeed(testing::EveryValueTypeWriter().Serialize());
  EXPECT_EQ(CheckTruncations(seed), "");
  Mutator mutator(seed);
  EXPECT_EQ(mutator.Run(2000, /*copy_every=*/1), "");
  ExpectBothOutcomes(mutator);
}

TEST(GgufFuzzTest, Stories260K) {
  const std::string path = testing::SharedPath("models/stories260K.gguf");
  std::optional<std::vector<uint8_t>> bytes = testing::ReadFileBytes(path);
  if (!bytes.has_value()) GTEST_SKIP() << path << " is absent";
  const Seed seed = MakeSeed(std::move(*bytes));
  EXPECT_EQ(CheckTruncations(seed), "");
  Mutator mutator(seed);
  EXPECT_EQ(mutator.Run(1000, /*copy_every=*/4), "");
  ExpectBothOutcomes(mutator);
}

}  // namespace
}  // namespace ds::gguf
