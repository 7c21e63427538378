#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "base/large_buffer.h"
#include "base/system_memory.h"
#include "gguf/gguf.h"
#include "gguf/test_util.h"

namespace ds::gguf {
namespace {

using testing::RawFile;

constexpr uint64_t kU64Max = UINT64_MAX;

StatusOr<std::unique_ptr<File>> Parse(const RawFile& raw) {
  return File::FromBuffer(raw.bytes(), "model.gguf");
}

// The whole message, so the tests pin down what a user will read.
std::string ErrorOf(const RawFile& raw) {
  StatusOr<std::unique_ptr<File>> file = Parse(raw);
  if (file.ok()) return "ok";
  EXPECT_EQ(file.status().code(), StatusCode::kInvalidArgument) << file.status().message();
  return file.status().message();
}

// One tensor 't' with the given info, the data section at 64 (the info ends at 57), and
// `data_bytes` bytes of data.
RawFile OneTensor(const std::vector<uint64_t>& ne, uint32_t type, uint64_t offset,
                  size_t data_bytes) {
  RawFile raw;
  raw.Header(3, 1, 0).TensorInfo("t", ne, type, offset).PadTo(32).Zeros(data_bytes);
  return raw;
}

// Key 'a' holding `levels` arrays nested in one another, the innermost an empty u8 array.
RawFile NestedArrays(int levels) {
  RawFile raw;
  raw.Header(3, 0, 1).Str("a").U32(9);
  for (int i = 0; i < levels; ++i) {
    const bool innermost = i == levels - 1;
    raw.U32(innermost ? 0 : 9).U64(innermost ? 0 : 1);
  }
  return raw;
}

TEST(ReaderTest, ReadsStories260K) {
  const std::string path = testing::SharedPath("models/stories260K.gguf");
  if (::access(path.c_str(), R_OK) != 0) GTEST_SKIP() << path << " is absent";
  StatusOr<std::unique_ptr<File>> opened = File::Open(path);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  const File& file = **opened;
  EXPECT_EQ(file.version(), 3u);
  EXPECT_EQ(file.alignment(), 32u);
  EXPECT_EQ(file.bytes().size(), 1185376u);
  EXPECT_EQ(file.metadata().size(), 19u);
  EXPECT_EQ(*file.GetString("general.architecture"), "llama");
  EXPECT_EQ(*file.GetUint("llama.block_count"), 5u);
  EXPECT_EQ(*file.GetInt("llama.embedding_length"), 64);
  EXPECT_EQ(*file.GetUint("tokenizer.ggml.padding_token_id"), 4294967295u);
  EXPECT_NEAR(*file.GetFloat("llama.attention.layer_norm_rms_epsilon"), 1e-5, 1e-9);
  StatusOr<const Array*> tokens = file.GetArray("tokenizer.ggml.tokens");
  ASSERT_TRUE(tokens.ok());
  EXPECT_EQ((*tokens)->element_type, ValueType::kString);
  ASSERT_EQ((*tokens)->items.size(), 512u);
  EXPECT_EQ(std::get<std::string>((*tokens)->items[2].data), "</s>");

  ASSERT_EQ(file.tensors().size(), 48u);
  EXPECT_EQ(file.data_offset(), 14176u);  // the infos end at 14152, aligned up to 32
  const TensorInfo* embd = file.FindTensor("token_embd.weight");
  ASSERT_NE(embd, nullptr);
  EXPECT_EQ(embd->ne, (std::vector<int64_t>{64, 512}));
  EXPECT_EQ(embd->type, tensor::DType::kF32);
  EXPECT_EQ(embd->size_bytes, 64u * 512 * 4);
  EXPECT_EQ(embd->num_rows(), 512);
  EXPECT_EQ(embd->data, file.bytes().data() + 14176);
  const TensorInfo* last = file.FindTensor("blk.4.ffn_norm.weight");
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->data + last->size_bytes, file.bytes().data() + file.bytes().size());

  // A caller buffer with the same bytes parses to the same layout.
  std::optional<std::vector<uint8_t>> bytes = testing::ReadFileBytes(path);
  ASSERT_TRUE(bytes.has_value());
  StatusOr<std::unique_ptr<File>> buffered = File::FromBuffer(*bytes, "copy");
  ASSERT_TRUE(buffered.ok()) << buffered.status().ToString();
  EXPECT_EQ((*buffered)->FindTensor("output.weight")->offset,
            file.FindTensor("output.weight")->offset);
}

TEST(ReaderTest, AcceptsVersion2) {
  RawFile raw;
  raw.Header(2, 0, 1).Str("a").U32(4).U32(5);
  StatusOr<std::unique_ptr<File>> file = Parse(raw);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ((*file)->version(), 2u);
  EXPECT_EQ(*(*file)->GetUint("a"), 5u);
}

TEST(ReaderTest, AcceptsMetadataOnlyFileWithoutPadding) {
  RawFile raw;
  raw.Header(3, 0, 1).Str("a").U32(4).U32(1);
  EXPECT_EQ(ErrorOf(raw), "ok");
}

TEST(ReaderTest, AcceptsTensorEndingExactlyAtEndOfFile) {
  const RawFile raw = OneTensor({4}, 0, 0, 16);
  StatusOr<std::unique_ptr<File>> file = Parse(raw);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ((*file)->data_offset(), 64u);
  EXPECT_EQ((*file)->tensors()[0].data, raw.bytes().data() + 64);
}

TEST(ReaderTest, AcceptsEightNestedArraysButNotNine) {
  EXPECT_EQ(ErrorOf(NestedArrays(8)), "ok");
  EXPECT_NE(ErrorOf(NestedArrays(9)).find("arrays nested more than 8 deep"), std::string::npos);
}

TEST(ReaderErrorTest, Header) {
  EXPECT_EQ(
      ErrorOf(RawFile()),
      "model.gguf: truncated: magic (4 bytes) at offset 0 extends past end of file (0 bytes)");
  EXPECT_EQ(ErrorOf(RawFile().U32(0x4c4d4747).U32(3)),
            "model.gguf: not a GGUF file (the magic is not 'GGUF')");
  EXPECT_EQ(ErrorOf(RawFile().Header(3, 0, 0).Zeros(0)), "ok");
  RawFile short_header;
  short_header.Header(3, 0, 0);
  std::vector<uint8_t> cut(short_header.bytes().begin(), short_header.bytes().end() - 1);
  StatusOr<std::unique_ptr<File>> file = File::FromBuffer(cut, "model.gguf");
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().message(),
            "model.gguf: truncated: metadata key/value count (8 bytes) at offset 16 extends past "
            "end of file (23 bytes)");
}

TEST(ReaderErrorTest, UnsupportedVersions) {
  StatusOr<std::unique_ptr<File>> v1 = Parse(RawFile().Header(1, 0, 0));
  ASSERT_FALSE(v1.ok());
  EXPECT_EQ(v1.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(v1.status().message(),
            "model.gguf: GGUF version 1 is not supported (it uses 32-bit counts); only versions 2 "
            "and 3 are");
  StatusOr<std::unique_ptr<File>> v4 = Parse(RawFile().Header(4, 0, 0));
  ASSERT_FALSE(v4.ok());
  EXPECT_EQ(v4.status().message(),
            "model.gguf: GGUF version 4 is not supported; only versions 2 and 3 are");
  StatusOr<std::unique_ptr<File>> swapped = Parse(RawFile().Header(0x03000000, 0, 0));
  ASSERT_FALSE(swapped.ok());
  EXPECT_NE(swapped.status().message().find("big-endian GGUF files are not supported"),
            std::string::npos);
}

TEST(ReaderErrorTest, CountsMustFitTheFile) {
  EXPECT_EQ(ErrorOf(RawFile().Header(3, 0, 1000).Zeros(100)),
            "model.gguf: metadata key/value count 1000 cannot fit in the 100 bytes after the "
            "header");
  EXPECT_EQ(ErrorOf(RawFile().Header(3, 5, 0).Zeros(100)),
            "model.gguf: tensor count 5 cannot fit in the 100 bytes after the header");
  EXPECT_EQ(ErrorOf(RawFile().Header(3, 0, uint64_t{1} << 40)),
            "model.gguf: metadata key/value count 1099511627776 exceeds the limit of 4194304");
  EXPECT_EQ(ErrorOf(RawFile().Header(3, kU64Max, 0)),
            "model.gguf: tensor count 18446744073709551615 exceeds the limit of 1048576");
}

TEST(ReaderErrorTest, Keys) {
  EXPECT_EQ(ErrorOf(RawFile().Header(3, 0, 1).U64(1000).Zeros(20)),
            "model.gguf: key #0: key name length 1000 at offset 24 extends past end of file (52 "
            "bytes)");
  EXPECT_EQ(ErrorOf(RawFile().Header(3, 0, 1).Str("").U32(4).U32(1)),
            "model.gguf: key #0 has an empty name");
  EXPECT_EQ(ErrorOf(RawFile().Header(3, 0, 1).Str("a").U32(13).U32(0)),
            "model.gguf: key 'a': unknown value type 13");
  EXPECT_EQ(ErrorOf(RawFile().Header(3, 0, 2).Str("a").U32(4).U32(1).Str("a").U32(4).U32(2)),
            "model.gguf: duplicate key 'a'");
}

TEST(ReaderErrorTest, ScalarAndStringValues) {
  EXPECT_EQ(ErrorOf(RawFile().Header(3, 0, 1).Str("a").U32(10).U8(0).U8(0).U8(0)),
            "model.gguf: key 'a': truncated: u64 (8 bytes) at offset 37 extends past end of file "
            "(40 bytes)");
  EXPECT_EQ(ErrorOf(RawFile().Header(3, 0, 1).Str("a").U32(8).U64(kU64Max)),
            "model.gguf: key 'a': string length 18446744073709551615 at offset 37 extends past "
            "end of file (45 bytes)");
  EXPECT_EQ(ErrorOf(RawFile().Header(3, 0, 1).Str("a").U32(7).U8(2)),
            "model.gguf: key 'a': bool value 2 at offset 37 is neither 0 nor 1");
  RawFile long_string;
  long_string.Header(3, 0, 1).Str("a").U32(8).U64(kMaxStringBytes + 1).Zeros(kMaxStringBytes + 1);
  EXPECT_EQ(ErrorOf(long_string),
            "model.gguf: key 'a': string length 67108865 at offset 37 exceeds the limit of "
            "67108864 bytes");
}

TEST(ReaderErrorTest, Arrays) {
  EXPECT_EQ(ErrorOf(RawFile().Header(3, 0, 1).Str("a").U32(9).U32(99).U64(0)),
            "model.gguf: key 'a': unknown array element type 99");
  EXPECT_EQ(ErrorOf(RawFile().Header(3, 0, 1).Str("a").U32(9).U32(4).U64(1000000).Zeros(16)),
            "model.gguf: key 'a': array count 1000000 of u32 at offset 41 cannot fit in the 16 "
            "bytes left in the file");
  // Enough bytes for the count, but more values than the per-file budget (one went to the key).
  RawFile over_budget;
  over_budget.Header(3, 0, 1).Str("a").U32(9).U32(0).U64(kMaxMetadataValues);
  over_budget.Zeros(kMaxMetadataValues);
  EXPECT_EQ(ErrorOf(over_budget),
            "model.gguf: key 'a': array count 4194304 at offset 41 exceeds the limit of 4194304 "
            "metadata values per file");
  // An error deep inside nested arrays names the path to it.
  RawFile nested;
  nested.Header(3, 0, 1).Str("a").U32(9).U32(9).U64(2);
  nested.U32(8).U64(1).Str("x");
  nested.U32(8).U64(1).U64(999);
  EXPECT_EQ(ErrorOf(nested),
            "model.gguf: key 'a': array element 1: array element 0: string length 999 at offset "
            "82 extends past end of file (90 bytes)");
}

TEST(ReaderErrorTest, Alignment) {
  EXPECT_EQ(ErrorOf(RawFile().Header(3, 0, 1).Str("general.alignment").U32(10).U64(64)),
            "model.gguf: key 'general.alignment' has type u64, expected u32");
  EXPECT_EQ(ErrorOf(RawFile().Header(3, 0, 1).Str("general.alignment").U32(4).U32(48)),
            "model.gguf: key 'general.alignment' is 48; it must be a nonzero power of two");
  EXPECT_EQ(ErrorOf(RawFile().Header(3, 0, 1).Str("general.alignment").U32(4).U32(0)),
            "model.gguf: key 'general.alignment' is 0; it must be a nonzero power of two");
  // A smaller alignment is honored for offsets and the data section.
  RawFile aligned16;
  aligned16.Header(3, 2, 1).Str("general.alignment").U32(4).U32(16);
  aligned16.TensorInfo("a", {1}, 0, 0)
      .TensorInfo("b.long.name.xyz", {1}, 0, 16)
      .PadTo(16)
      .Zeros(32);
  StatusOr<std::unique_ptr<File>> file = Parse(aligned16);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ((*file)->alignment(), 16u);
  EXPECT_EQ((*file)->data_offset() % 16, 0u);
  EXPECT_NE((*file)->data_offset() % 32, 0u);
}

TEST(ReaderErrorTest, TensorShapes) {
  RawFile unnamed;
  unnamed.Header(3, 1, 0).TensorInfo("", {4}, 0, 0).PadTo(32).Zeros(16);
  EXPECT_EQ(ErrorOf(unnamed), "model.gguf: tensor #0 has an empty name");
  EXPECT_EQ(ErrorOf(OneTensor({}, 0, 0, 16)), "model.gguf: tensor 't': n_dims 0 is outside [1, 4]");
  EXPECT_EQ(ErrorOf(OneTensor({1, 1, 1, 1, 1}, 0, 0, 16)),
            "model.gguf: tensor 't': n_dims 5 is outside [1, 4]");
  EXPECT_EQ(ErrorOf(OneTensor({4, 0}, 0, 0, 16)),
            "model.gguf: tensor 't': dimension 1 is 0; it must be in [1, 2^63)");
  EXPECT_EQ(ErrorOf(OneTensor({uint64_t{1} << 63}, 0, 0, 16)),
            "model.gguf: tensor 't': dimension 0 is 9223372036854775808; it must be in [1, 2^63)");
  EXPECT_EQ(ErrorOf(OneTensor({uint64_t{1} << 32, uint64_t{1} << 32}, 0, 0, 16)),
            "model.gguf: tensor 't': element count overflows int64");
  EXPECT_EQ(ErrorOf(OneTensor({uint64_t{1} << 61, 3}, 28, 0, 16)),
            "model.gguf: tensor 't': size in bytes overflows uint64");
}

TEST(ReaderErrorTest, TensorTypes) {
  EXPECT_EQ(ErrorOf(OneTensor({4}, 99, 0, 16)), "model.gguf: tensor 't': unknown ggml type 99");
  EXPECT_EQ(ErrorOf(OneTensor({4}, 4, 0, 16)), "model.gguf: tensor 't': unknown ggml type 4");
  EXPECT_EQ(ErrorOf(OneTensor({33}, 8, 0, 64)),
            "model.gguf: tensor 't': row length 33 is not a multiple of the q8_0 block size 32");
}

TEST(ReaderErrorTest, TensorData) {
  EXPECT_EQ(ErrorOf(OneTensor({4}, 0, 4, 16)),
            "model.gguf: tensor 't': data offset 4 is not a multiple of the alignment 32");
  EXPECT_EQ(ErrorOf(OneTensor({4}, 0, 0, 8)),
            "model.gguf: tensor 't' data [64, 80) extends past end of file (72 bytes)");
  // The end of this range does not fit in 64 bits; it must be reported, not wrapped.
  EXPECT_EQ(ErrorOf(OneTensor({4}, 0, kU64Max - 31, 16)),
            "model.gguf: tensor 't' data [18446744073709551648, 18446744073709551664) extends "
            "past end of file (80 bytes)");
  RawFile duplicate;
  duplicate.Header(3, 2, 0).TensorInfo("t", {4}, 0, 0).TensorInfo("t", {4}, 0, 32);
  duplicate.PadTo(32).Zeros(64);
  EXPECT_EQ(ErrorOf(duplicate), "model.gguf: duplicate tensor name 't'");
  RawFile truncated;
  truncated.Header(3, 1, 0).Str("tensor").U32(1).U64(4).U32(0).Zeros(4);
  EXPECT_EQ(ErrorOf(truncated),
            "model.gguf: tensor 'tensor': truncated: data offset (8 bytes) at offset 54 extends "
            "past end of file (58 bytes)");
}

// A file of `bytes` at a fresh temporary path, removed with the object.
class TempFile {
 public:
  TempFile(const std::string& name, std::span<const uint8_t> bytes)
      : path_(::testing::TempDir() + name) {
    std::ofstream out(path_, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
  }
  ~TempFile() { ::unlink(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(ReaderTest, OpenCopiesAModelOntoHugePagesOrMapsIt) {
  // 3 MiB of f32 data, each byte a function of its offset, so a misplaced copy shows.
  constexpr uint64_t kElements = 3 << 18;
  const RawFile raw = OneTensor({kElements}, 0, 0, kElements * 4);
  std::vector<uint8_t> bytes = raw.bytes();
  for (size_t i = 64; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7);
  const TempFile model("gguf_huge_pages.gguf", bytes);
  ASSERT_GE(bytes.size(), kHugePageBytes);

  for (Residency asked : {Residency::kHugePages, Residency::kMapped}) {
    StatusOr<std::unique_ptr<File>> opened = File::Open(model.path(), asked);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    const File& file = **opened;
    const bool copied = asked == Residency::kHugePages && HugePagesAvailable() &&
                        CopyFitsInMemory(bytes.size(), AvailableMemoryBytes());
    EXPECT_EQ(file.residency(), copied ? Residency::kHugePages : Residency::kMapped);
    ASSERT_EQ(file.bytes().size(), bytes.size());
    EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), file.bytes().begin()));
    const TensorInfo* t = file.FindTensor("t");
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->data, file.bytes().data() + 64);
  }
}

// A tensor's bytes are rewritten in place once, and only where the File may write them: its own
// copy, or a caller's writable buffer; never a mapping or a caller's read-only bytes.
TEST(ReaderTest, TensorsAreRewrittenOnceWhereTheBytesAreWritable) {
  constexpr uint64_t kElements = 3 << 18;
  const RawFile raw = OneTensor({kElements}, 0, 0, kElements * 4);
  const std::vector<uint8_t> bytes = raw.bytes();
  const TempFile model("gguf_rewrite.gguf", bytes);
  int rewrites = 0;
  const auto flip_first = [&](uint8_t* data) {
    ++rewrites;
    data[0] ^= 0xff;
  };
  for (Residency asked : {Residency::kHugePages, Residency::kMapped}) {
    StatusOr<std::unique_ptr<File>> opened = File::Open(model.path(), asked);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    File& file = **opened;
    const TensorInfo& t = *file.FindTensor("t");
    const bool own_copy = file.residency() == Residency::kHugePages;
    rewrites = 0;
    EXPECT_EQ(file.RewriteTensorOnce(t, flip_first), own_copy);
    EXPECT_EQ(file.RewriteTensorOnce(t, flip_first), own_copy);
    EXPECT_EQ(rewrites, own_copy ? 1 : 0);
    EXPECT_EQ(t.data[0], own_copy ? static_cast<uint8_t>(bytes[64] ^ 0xff) : bytes[64]);
  }
  StatusOr<std::unique_ptr<File>> read_only = File::FromBuffer(bytes, "read-only");
  ASSERT_TRUE(read_only.ok());
  EXPECT_FALSE((*read_only)->RewriteTensorOnce(*(*read_only)->FindTensor("t"), flip_first));
  std::vector<uint8_t> writable = bytes;
  StatusOr<std::unique_ptr<File>> buffered = File::FromWritableBuffer(writable, "writable");
  ASSERT_TRUE(buffered.ok());
  EXPECT_TRUE((*buffered)->RewriteTensorOnce(*(*buffered)->FindTensor("t"), flip_first));
  EXPECT_EQ(writable[64], static_cast<uint8_t>(bytes[64] ^ 0xff));
  EXPECT_EQ(bytes[64], raw.bytes()[64]);
}

TEST(ReaderTest, ACopyMustLeaveMemoryToSpare) {
  constexpr int64_t kGiB = int64_t{1} << 30;
  EXPECT_TRUE(CopyFitsInMemory(2 * kGiB, 4 * kGiB));
  EXPECT_FALSE(CopyFitsInMemory(3 * kGiB + 1, 4 * kGiB));  // leaves less than 1 GiB
  EXPECT_TRUE(CopyFitsInMemory(80 * kGiB, 100 * kGiB));
  EXPECT_FALSE(CopyFitsInMemory(91 * kGiB, 100 * kGiB));  // leaves less than a tenth
  EXPECT_FALSE(CopyFitsInMemory(1, kGiB / 2));
  EXPECT_FALSE(CopyFitsInMemory(1, -1));  // unknown
}

TEST(ReaderTest, OpenMapsFilesSmallerThanAHugePage) {
  const RawFile raw = OneTensor({16}, 0, 0, 64);
  const TempFile model("gguf_small.gguf", raw.bytes());
  StatusOr<std::unique_ptr<File>> opened = File::Open(model.path(), Residency::kHugePages);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ((*opened)->residency(), Residency::kMapped);
  EXPECT_EQ((*opened)->FindTensor("t")->data, (*opened)->bytes().data() + 64);
}

TEST(ReaderErrorTest, OpenNamesThePath) {
  const std::string missing = ::testing::TempDir() + "no_such_model.gguf";
  StatusOr<std::unique_ptr<File>> file = File::Open(missing);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(file.status().message().rfind(missing + ": cannot open", 0), 0u);

  StatusOr<std::unique_ptr<File>> dir = File::Open(::testing::TempDir());
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.status().message().find("not a regular file"), std::string::npos);

  const std::string empty = ::testing::TempDir() + "gguf_empty_file.gguf";
  { std::ofstream create(empty); }
  StatusOr<std::unique_ptr<File>> empty_file = File::Open(empty);
  ASSERT_FALSE(empty_file.ok());
  EXPECT_EQ(empty_file.status().message(),
            empty + ": truncated: magic (4 bytes) at offset 0 extends past end of file (0 bytes)");
  ::unlink(empty.c_str());
}

}  // namespace
}  // namespace ds::gguf
