// Helpers shared by the stats tests.
#pragma once

#include <gtest/gtest.h>

#include <cmath>

#include "tfdebug/core/stats.hpp"

namespace tfdebug::testing {

// Bit-for-bit equality of two doubles, with every NaN equal to every NaN.
inline bool identical(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

inline void expect_identical(const Stats& a, const Stats& b) {
  EXPECT_EQ(a.count, b.count);
  EXPECT_EQ(a.nan, b.nan);
  EXPECT_EQ(a.pos_inf, b.pos_inf);
  EXPECT_EQ(a.neg_inf, b.neg_inf);
  EXPECT_EQ(a.zero, b.zero);
  EXPECT_EQ(a.subnormal, b.subnormal);
  EXPECT_EQ(a.negative, b.negative);
  EXPECT_EQ(a.positive, b.positive);
  for (auto [x, y, name] : {std::tuple{a.min, b.min, "min"},
                            {a.max, b.max, "max"},
                            {a.abs_max, b.abs_max, "abs_max"},
                            {a.min_abs_nonzero, b.min_abs_nonzero, "min_abs_nonzero"},
                            {a.mean, b.mean, "mean"},
                            {a.variance, b.variance, "variance"},
                            {a.std, b.std, "std"},
                            {a.l1, b.l1, "l1"},
                            {a.l2, b.l2, "l2"},
                            {a.range_used, b.range_used, "range_used"}}) {
    EXPECT_TRUE(identical(x, y)) << name << ": " << x << " vs " << y;
  }
  ASSERT_EQ(a.target.has_value(), b.target.has_value());
  if (a.target) {
    EXPECT_EQ(a.target->overflow, b.target->overflow);
    EXPECT_EQ(a.target->underflow, b.target->underflow);
    EXPECT_EQ(a.target->subnormal, b.target->subnormal);
    EXPECT_TRUE(identical(a.target->range_used, b.target->range_used));
  }
}

}  // namespace tfdebug::testing
