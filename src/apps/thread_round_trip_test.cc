#include "apps/thread_round_trip.h"

#include <gtest/gtest.h>

namespace ds::apps {
namespace {

TEST(ThreadRoundTripTest, TwoThreadsTakeAPositiveTimeBelowAMillisecond) {
  ThreadPool pool(2);
  const std::optional<double> ns = MeasureThreadRoundTripNs(&pool);
  ASSERT_TRUE(ns.has_value());
  EXPECT_GT(*ns, 0.0);
  EXPECT_LT(*ns, 1e6);
}

TEST(ThreadRoundTripTest, MoreThreadsUseTheFirstTwoAndReturn) {
  ThreadPool pool(3);
  EXPECT_TRUE(MeasureThreadRoundTripNs(&pool).has_value());
}

TEST(ThreadRoundTripTest, OneThreadHasNoRoundTrip) {
  ThreadPool pool(1);
  EXPECT_FALSE(MeasureThreadRoundTripNs(&pool).has_value());
  EXPECT_FALSE(MeasureThreadRoundTripNs(nullptr).has_value());
}

}  // namespace
}  // namespace ds::apps
