#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "gguf/test_util.h"

namespace ds::gguf {
namespace {

using testing::Describe;
using testing::PatternBytes;
using testing::RawFile;

std::unique_ptr<File> MustParse(const std::vector<uint8_t>& bytes) {
  StatusOr<std::unique_ptr<File>> file = File::FromBuffer(bytes, "test.gguf");
  EXPECT_TRUE(file.ok()) << file.status().ToString();
  return file.ok() ? std::move(file).value() : nullptr;
}

// The layout spelled out field by field, independently of the writer's code.
TEST(WriterTest, SerializesTheExactV3Layout) {
  Writer writer;
  writer.Set("k", Value::U32(7));
  writer.AddTensor("w", {2}, tensor::DType::kF32, PatternBytes(8, 9));
  const std::vector<uint8_t> bytes = writer.Serialize();

  RawFile expected;
  expected.Header(3, 1, 1).Str("k").U32(4).U32(7);
  expected.TensorInfo("w", {2}, 0, 0).PadTo(32);
  const std::vector<uint8_t> data = PatternBytes(8, 9);
  for (uint8_t b : data) expected.U8(b);
  expected.PadTo(32);
  EXPECT_EQ(bytes, expected.bytes());
}

TEST(WriterTest, RoundTripsEveryValueType) {
  const std::vector<uint8_t> bytes = testing::EveryValueTypeWriter().Serialize();
  std::unique_ptr<File> file = MustParse(bytes);
  ASSERT_NE(file, nullptr);
  EXPECT_EQ(file->version(), 3u);
  const auto expected = testing::EveryValueTypeMetadata();
  ASSERT_EQ(file->metadata().size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(file->metadata()[i].first, expected[i].first);
    EXPECT_EQ(Describe(file->metadata()[i].second), Describe(expected[i].second));
    const Value* found = file->Find(expected[i].first);
    ASSERT_NE(found, nullptr) << expected[i].first;
    EXPECT_EQ(Describe(*found), Describe(expected[i].second));
  }
  // Spot-check Describe itself so the comparison above cannot pass vacuously.
  EXPECT_EQ(Describe(*file->Find("a.nested")),
            "array<array>[array<u32>[u32:1,u32:2],array<string>[string:\"inner\"],"
            "array<array>[array<i8>[i8:-1]],array<f32>[]]");
  EXPECT_EQ(*file->GetString("t.str_nul"), std::string("a\0b", 3));
  EXPECT_EQ(*file->GetFloat("t.f32"), static_cast<double>(-1.25e-3f));
}

TEST(WriterTest, RoundTripsTensorsOfSeveralDTypes) {
  const std::vector<uint8_t> bytes = testing::EveryValueTypeWriter().Serialize();
  std::unique_ptr<File> file = MustParse(bytes);
  ASSERT_NE(file, nullptr);
  struct Expected {
    const char* name;
    std::vector<int64_t> ne;
    tensor::DType type;
    size_t size_bytes;
    uint8_t seed;
  };
  const std::vector<Expected> expected = {
      {"w.f32", {8, 3}, tensor::DType::kF32, 96, 1},
      {"w.f32.odd", {5}, tensor::DType::kF32, 20, 2},
      {"w.f16", {16, 2}, tensor::DType::kF16, 64, 3},
      {"w.q8_0", {64, 3}, tensor::DType::kQ8_0, 204, 4},
      {"w.q4_k", {256, 2, 2}, tensor::DType::kQ4_K, 576, 5},
  };
  ASSERT_EQ(file->tensors().size(), expected.size());
  uint64_t next_offset = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    const TensorInfo& t = file->tensors()[i];
    SCOPED_TRACE(expected[i].name);
    EXPECT_EQ(t.name, expected[i].name);
    EXPECT_EQ(t.ne, expected[i].ne);
    EXPECT_EQ(t.type, expected[i].type);
    EXPECT_EQ(t.size_bytes, expected[i].size_bytes);
    EXPECT_EQ(t.offset, next_offset);  // packed in order, each padded to 32
    next_offset = (t.offset + t.size_bytes + 31) / 32 * 32;
    EXPECT_EQ(t.data, bytes.data() + file->data_offset() + t.offset);
    const std::vector<uint8_t> data = PatternBytes(expected[i].size_bytes, expected[i].seed);
    EXPECT_EQ(std::memcmp(t.data, data.data(), data.size()), 0);
    EXPECT_EQ(file->FindTensor(expected[i].name), &t);
  }
  EXPECT_EQ(file->data_offset() % 32, 0u);
  EXPECT_EQ(bytes.size(), file->data_offset() + next_offset);
  const TensorInfo* q4k = file->FindTensor("w.q4_k");
  EXPECT_EQ(q4k->num_elements(), 1024);
  EXPECT_EQ(q4k->num_rows(), 4);
  EXPECT_EQ(file->FindTensor("w.f32.odd")->num_rows(), 1);
  EXPECT_EQ(file->FindTensor("absent"), nullptr);
}

TEST(WriterTest, HonorsGeneralAlignment) {
  Writer writer;
  writer.Set("general.alignment", Value::U32(64));
  writer.AddTensor("a", {3}, tensor::DType::kF32, PatternBytes(12, 1));
  writer.AddTensor("b", {32}, tensor::DType::kQ8_0, PatternBytes(34, 2));
  const std::vector<uint8_t> bytes = writer.Serialize();
  EXPECT_EQ(bytes.size() % 64, 0u);
  std::unique_ptr<File> file = MustParse(bytes);
  ASSERT_NE(file, nullptr);
  EXPECT_EQ(file->alignment(), 64u);
  EXPECT_EQ(file->data_offset() % 64, 0u);
  EXPECT_EQ(file->FindTensor("b")->offset, 64u);
  EXPECT_EQ(std::memcmp(file->FindTensor("b")->data, PatternBytes(34, 2).data(), 34), 0);
}

TEST(WriterTest, SettingAKeyTwiceReplacesItInPlace) {
  Writer writer;
  writer.Set("first", Value::U32(1));
  writer.Set("second", Value::Str("x"));
  writer.Set("first", Value::Bool(true));
  std::unique_ptr<File> file = MustParse(writer.Serialize());
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(file->metadata().size(), 2u);
  EXPECT_EQ(file->metadata()[0].first, "first");
  EXPECT_EQ(*file->GetBool("first"), true);
}

TEST(WriterTest, EmptyWriterMakesAValidFile) {
  std::unique_ptr<File> file = MustParse(Writer().Serialize());
  ASSERT_NE(file, nullptr);
  EXPECT_TRUE(file->metadata().empty());
  EXPECT_TRUE(file->tensors().empty());
}

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return names;
  while (const dirent* entry = ::readdir(d)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(d);
  return names;
}

TEST(WriterTest, WriteFileIsReadableAndLeavesNoTemporary) {
  std::string dir = ::testing::TempDir() + "gguf_writer_XXXXXX";
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  const std::string path = dir + "/model.gguf";
  const Writer writer = testing::EveryValueTypeWriter();
  ASSERT_TRUE(writer.WriteFile(path).ok());
  // Writing again replaces the file atomically.
  ASSERT_TRUE(writer.WriteFile(path).ok());
  EXPECT_EQ(ListDir(dir), std::vector<std::string>{"model.gguf"});

  StatusOr<std::unique_ptr<File>> file = File::Open(path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  const std::vector<uint8_t> expected = writer.Serialize();
  ASSERT_EQ((*file)->bytes().size(), expected.size());
  EXPECT_EQ(std::memcmp((*file)->bytes().data(), expected.data(), expected.size()), 0);
  EXPECT_EQ((*file)->display_name(), path);
  EXPECT_EQ((*file)->tensors().size(), 5u);
  ::unlink(path.c_str());
  ::rmdir(dir.c_str());
}

TEST(WriterTest, WriteFileIntoMissingDirectoryFails) {
  const std::string path = ::testing::TempDir() + "no_such_dir_gguf/model.gguf";
  Status status = Writer().WriteFile(path);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("no_such_dir_gguf/model.gguf"), std::string::npos)
      << status.message();
}

TEST(WriterDeathTest, RejectsDataOfTheWrongSize) {
  Writer writer;
  EXPECT_DEATH(writer.AddTensor("w", {32}, tensor::DType::kQ8_0, PatternBytes(33, 0)),
               "does not match its shape");
}

TEST(WriterDeathTest, RejectsAValueWhoseTypeDisagreesWithItsData) {
  Writer writer;
  writer.Set("bad", Value{ValueType::kUint8, uint64_t{300}});
  EXPECT_DEATH(writer.Serialize(), "fitting uint64_t");
}

}  // namespace
}  // namespace ds::gguf
