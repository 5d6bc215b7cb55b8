#include "tfdebug/profile/regression.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "tfdebug/core/error.hpp"

namespace tfdebug::profile {
namespace {

// Exact null distribution of U: counts over C(m+n, m) arrangements, from the standard tables
// (e.g. Siegel & Castellan, Table J). m = n = 3: counts 1,1,2,3,3,3,3,2,1,1 over 20.
TEST(MannWhitney, ExactDistributionMatchesTables) {
  const int counts33[] = {1, 1, 2, 3, 3, 3, 3, 2, 1, 1};
  int cumulative = 0;
  for (int u = 0; u <= 9; ++u) {
    cumulative += counts33[u];
    EXPECT_NEAR(mann_whitney_exact_cdf(3, 3, u), cumulative / 20.0, 1e-15) << u;
  }
  // m = n = 5: P(U <= 2) = 4/252 and P(U <= 3) = 7/252, hence the two-sided 5% critical value 2.
  EXPECT_NEAR(mann_whitney_exact_cdf(5, 5, 2), 4.0 / 252, 1e-15);
  EXPECT_NEAR(mann_whitney_exact_cdf(5, 5, 3), 7.0 / 252, 1e-15);
  // m = 4, n = 6 (C(10,4) = 210): P(U <= 2) = (1 + 1 + 2)/210; the distribution is symmetric.
  EXPECT_NEAR(mann_whitney_exact_cdf(4, 6, 2), 4.0 / 210, 1e-15);
  EXPECT_NEAR(mann_whitney_exact_cdf(6, 4, 2), 4.0 / 210, 1e-15);
  EXPECT_NEAR(mann_whitney_exact_cdf(20, 20, 400), 1.0, 1e-12);
  EXPECT_THROW(mann_whitney_exact_cdf(21, 3, 1), Error);
}

TEST(MannWhitney, ExactTwoSidedPValue) {
  const std::vector<double> before = {10.1, 10.3, 9.9, 10.0, 10.2};
  const std::vector<double> after = {11.0, 11.2, 10.9, 11.1, 11.3};
  const MannWhitney r = mann_whitney(before, after);
  EXPECT_TRUE(r.exact);
  EXPECT_EQ(r.u, 25);
  EXPECT_NEAR(r.p_value, 2.0 / 252, 1e-15);
  // U = 2 for m = n = 5: p = 2 * 4/252.
  const std::vector<double> x = {1, 2, 3, 4, 7};
  const std::vector<double> y = {5, 6, 0.5, 8, 9};
  const MannWhitney r2 = mann_whitney(x, y);
  // Pairs with y > x; U' = 25 - 18 = 7, and P(U <= 7) = 39/252 (enumerating all C(10, 5)
  // arrangements), so p = 78/252.
  EXPECT_EQ(r2.u, 18);
  EXPECT_NEAR(r2.p_value, 78.0 / 252, 1e-15);
}

// With ties the normal approximation: values worked by hand.
// x = {1, 2, 2, 3}, y = {2, 3, 4, 5}: U = 2 + 3.5 + 4 + 4 = 13.5 (pairs y > x, ties 1/2);
// pooled ties: 2 (x3), 3 (x2): sum t^3 - t = 24 + 6 = 30; var = 16/12 * (9 - 30/56) =
// 11.285714...; z = (|13.5 - 8| - 0.5) / sqrt(var) = 1.488351...; p = erfc(z / sqrt 2) = 0.13666...
TEST(MannWhitney, NormalApproximationWithTies) {
  const std::vector<double> x = {1, 2, 2, 3};
  const std::vector<double> y = {2, 3, 4, 5};
  const MannWhitney r = mann_whitney(x, y);
  EXPECT_FALSE(r.exact);
  EXPECT_EQ(r.u, 13.5);
  const double var = 16.0 / 12 * (9 - 30.0 / 56);
  const double z = 5.0 / std::sqrt(var);
  EXPECT_NEAR(r.p_value, std::erfc(z / std::sqrt(2.0)), 1e-14);
  EXPECT_NEAR(r.p_value, 0.13666, 1e-5);
}

TEST(Compare, ChangeIntervalAndEffect) {
  const std::vector<double> before = {100, 101, 99, 100, 102, 98, 100, 101};
  const std::vector<double> after = {110, 111, 109, 110, 112, 108, 110, 111};
  const SampleComparison c = compare_samples(before, after);
  EXPECT_NEAR(c.change, 0.10, 1e-12);  // medians 100 -> 110
  EXPECT_EQ(c.shift, 10);              // every pairwise difference centred on 10
  EXPECT_LE(c.change_low, 0.10);
  EXPECT_GE(c.change_high, 0.10);
  EXPECT_GT(c.change_low, 0.0);
  EXPECT_EQ(c.effect, 1.0);
  EXPECT_EQ(grade(c, 0.05, 0.06), Severity::kMinor);  // 6% <= 10% < 12%
  EXPECT_EQ(grade(c, 0.05, 0.04), Severity::kMajor);  // 8% <= 10% < 16%
  EXPECT_EQ(grade(c, 0.05, 0.02), Severity::kCritical);
  EXPECT_EQ(grade(c, 0.05, 0.20), Severity::kNegligible);
  const SampleComparison same = compare_samples(before, before);
  EXPECT_EQ(same.test.p_value, 1.0);
  EXPECT_EQ(grade(same, 0.05, 0.05), Severity::kUnchanged);
  EXPECT_EQ(grade(compare_samples(after, before), 0.05, 0.05), Severity::kImproved);
  EXPECT_THROW(compare_samples({}, before), Error);
}

// The distribution-free interval for m = n = 5 at 95%: k = 3 (P(U <= 2) = 4/252 <= 0.025 and
// P(U <= 3) = 7/252 > 0.025), so [d_(3), d_(23)] of the 25 sorted differences.
TEST(Compare, IntervalUsesTheExactQuantile) {
  const std::vector<double> base = {10, 10.001, 10.002, 10.003, 10.004};
  const std::vector<double> cur = {11, 12, 13, 14, 15};
  const SampleComparison c = compare_samples(base, cur);
  std::vector<double> d;
  for (double a : base)
    for (double b : cur) d.push_back(b - a);
  std::sort(d.begin(), d.end());
  EXPECT_DOUBLE_EQ(c.change_low * c.baseline_median, d[2]);
  EXPECT_DOUBLE_EQ(c.change_high * c.baseline_median, d[22]);
}

}  // namespace
}  // namespace tfdebug::profile
