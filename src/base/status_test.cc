#include "base/status.h"

#include <gtest/gtest.h>

namespace ds {
namespace {

StatusOr<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgumentError("odd value " + std::to_string(x));
  return x / 2;
}

StatusOr<int> Quarter(int x) {
  DS_ASSIGN_OR_RETURN(int half, Half(x));
  DS_ASSIGN_OR_RETURN(int quarter, Half(half));
  return quarter;
}

TEST(StatusTest, PropagatesFirstError) {
  EXPECT_EQ(*Quarter(8), 2);
  StatusOr<int> bad = Quarter(6);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().ToString(), "invalid argument: odd value 3");
}

}  // namespace
}  // namespace ds
