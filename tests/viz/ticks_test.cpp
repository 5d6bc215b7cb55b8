#include "tfdebug/viz/ticks.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

namespace tfdebug::viz {
namespace {

using ::testing::ElementsAre;

TEST(Ticks, LinearPicksNiceStepsNearTheTarget) {
  const Ticks t = linear_ticks(0.0, 0.93, 5);
  EXPECT_DOUBLE_EQ(t.step, 0.2);
  ASSERT_EQ(t.values.size(), 5u);
  EXPECT_DOUBLE_EQ(t.values[4], 0.8);
  EXPECT_THAT(t.labels, ElementsAre("0", "0.2", "0.4", "0.6", "0.8"));
}

TEST(Ticks, LinearStaysInsideTheRangeAndCrossesZeroExactly) {
  const Ticks t = linear_ticks(-0.31, 0.27, 5);
  EXPECT_DOUBLE_EQ(t.step, 0.1);
  EXPECT_THAT(t.labels, ElementsAre("-0.3", "-0.2", "-0.1", "0", "0.1", "0.2"));
  for (double v : t.values) EXPECT_TRUE(v >= -0.31 && v <= 0.27) << v;
}

TEST(Ticks, LinearUsesTwoAndAHalfWhenItFitsBest) {
  const Ticks t = linear_ticks(0.0, 10.0, 4);
  EXPECT_DOUBLE_EQ(t.step, 2.5);
  EXPECT_THAT(t.labels, ElementsAre("0", "2.5", "5", "7.5", "10"));
}

TEST(Ticks, LargeAndSmallNumbersUseShortExponents) {
  EXPECT_THAT(linear_ticks(0, 4e6, 4).labels, ElementsAre("0", "1e6", "2e6", "3e6", "4e6"));
  EXPECT_THAT(linear_ticks(1e-5, 3e-5, 5).labels, ElementsAre("1e-5", "1.5e-5", "2e-5", "2.5e-5", "3e-5"));
  EXPECT_EQ(format_value(1234567.0), "1.235e6");
  EXPECT_EQ(format_value(0.000012345), "1.234e-5");
  EXPECT_EQ(format_value(2.5), "2.5");
  EXPECT_EQ(format_value(NAN), "NaN");
}

TEST(Ticks, DegenerateRanges) {
  EXPECT_THAT(linear_ticks(3.0, 3.0).labels, ElementsAre("3"));
  EXPECT_TRUE(linear_ticks(1.0, 0.0).values.empty());
  EXPECT_TRUE(linear_ticks(0.0, INFINITY).values.empty());
  EXPECT_TRUE(log_ticks(0.0, 10.0).values.empty());
  const Range r = padded_range(5.0, 5.0);
  EXPECT_LT(r.lo, 5.0);
  EXPECT_GT(r.hi, 5.0);
  const Range n = padded_range(NAN, 1.0);
  EXPECT_EQ(n.lo, 0.0);
  EXPECT_EQ(n.hi, 1.0);
}

TEST(Ticks, LogTicksAreDecadesThinnedToTheTarget) {
  EXPECT_THAT(log_ticks(3e-4, 20.0).labels, ElementsAre("1e-3", "1e-2", "1e-1", "1", "1e1"));
  EXPECT_THAT(log_ticks(0.01, 1000.0).labels, ElementsAre("0.01", "0.1", "1", "10", "100", "1000"));
  const Ticks wide = log_ticks(1e-12, 1e12, 6);
  EXPECT_DOUBLE_EQ(wide.step, 5);
  EXPECT_THAT(wide.labels, ElementsAre("1e-10", "1e-5", "1", "1e5", "1e10"));
  EXPECT_THAT(log_ticks(1.5, 9.0).labels, ElementsAre("2", "5"));
}

TEST(Ticks, PaddedRangeEndsOnTicks) {
  const Range r = padded_range(0.13, 2.87);
  EXPECT_DOUBLE_EQ(r.lo, 0.0);
  EXPECT_DOUBLE_EQ(r.hi, 3.0);
  const Range l = padded_range(0.003, 420.0, true);
  EXPECT_DOUBLE_EQ(l.lo, 1e-3);
  EXPECT_DOUBLE_EQ(l.hi, 1e3);
}

}  // namespace
}  // namespace tfdebug::viz
