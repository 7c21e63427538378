#include <gtest/gtest.h>

#include "gguf/gguf.h"

namespace ds::gguf {
namespace {

class GettersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Writer writer;
    writer.Set("u8", Value::U8(200));
    writer.Set("i8.neg", Value::I8(-5));
    writer.Set("i32.pos", Value::I32(123));
    writer.Set("u64.max", Value::U64(UINT64_MAX));
    writer.Set("f32", Value::F32(0.5f));
    writer.Set("f64", Value::F64(-2.25));
    writer.Set("flag", Value::Bool(true));
    writer.Set("name", Value::Str("llama"));
    writer.Set("list", Value::Arr(ValueType::kInt16, {Value::I16(3), Value::I16(-4)}));
    bytes_ = writer.Serialize();
    StatusOr<std::unique_ptr<File>> file = File::FromBuffer(bytes_, "m.gguf");
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    file_ = std::move(file).value();
  }

  std::vector<uint8_t> bytes_;
  std::unique_ptr<File> file_;
};

TEST_F(GettersTest, IntegersConvertAcrossWidthsWhenTheyFit) {
  EXPECT_EQ(*file_->GetUint("u8"), 200u);
  EXPECT_EQ(*file_->GetInt("u8"), 200);
  EXPECT_EQ(*file_->GetInt("i8.neg"), -5);
  EXPECT_EQ(*file_->GetUint("i32.pos"), 123u);
  EXPECT_EQ(*file_->GetUint("u64.max"), UINT64_MAX);
}

TEST_F(GettersTest, IntegersThatDoNotFitAreErrors) {
  StatusOr<uint64_t> negative = file_->GetUint("i8.neg");
  ASSERT_FALSE(negative.ok());
  EXPECT_EQ(negative.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(negative.status().message(),
            "m.gguf: key 'i8.neg' is -5, expected an unsigned integer");
  StatusOr<int64_t> too_big = file_->GetInt("u64.max");
  ASSERT_FALSE(too_big.ok());
  EXPECT_EQ(too_big.status().message(),
            "m.gguf: key 'u64.max' is 18446744073709551615, which does not fit in i64");
}

TEST_F(GettersTest, FloatsBoolsStringsArrays) {
  EXPECT_EQ(*file_->GetFloat("f32"), 0.5);
  EXPECT_EQ(*file_->GetFloat("f64"), -2.25);
  EXPECT_EQ(*file_->GetBool("flag"), true);
  EXPECT_EQ(*file_->GetString("name"), "llama");
  StatusOr<const Array*> list = file_->GetArray("list");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ((*list)->element_type, ValueType::kInt16);
  ASSERT_EQ((*list)->items.size(), 2u);
  EXPECT_EQ(std::get<int64_t>((*list)->items[1].data), -4);
}

TEST_F(GettersTest, WrongTypeNamesKeyExpectedAndActual) {
  EXPECT_EQ(file_->GetFloat("u8").status().message(),
            "m.gguf: key 'u8' has type u8, expected f32 or f64");
  EXPECT_EQ(file_->GetString("f32").status().message(),
            "m.gguf: key 'f32' has type f32, expected string");
  EXPECT_EQ(file_->GetUint("name").status().message(),
            "m.gguf: key 'name' has type string, expected an unsigned integer");
  EXPECT_EQ(file_->GetInt("flag").status().message(),
            "m.gguf: key 'flag' has type bool, expected an integer");
  EXPECT_EQ(file_->GetBool("u8").status().message(), "m.gguf: key 'u8' has type u8, expected bool");
  EXPECT_EQ(file_->GetArray("name").status().message(),
            "m.gguf: key 'name' has type string, expected array");
  EXPECT_EQ(file_->GetArray("name").status().code(), StatusCode::kInvalidArgument);
}

TEST_F(GettersTest, MissingKeyIsNotFound) {
  StatusOr<std::string> missing = file_->GetString("absent");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "m.gguf: key 'absent' not found");
  EXPECT_EQ(file_->Find("absent"), nullptr);
  EXPECT_EQ(ValueTypeName(static_cast<ValueType>(77)), "unknown");
}

}  // namespace
}  // namespace ds::gguf
