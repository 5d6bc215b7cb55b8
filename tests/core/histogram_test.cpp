#include "tfdebug/core/histogram.hpp"

#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "tfdebug/core/error.hpp"
#include "tfdebug/core/tensor.hpp"

namespace tfdebug {
namespace {

TensorView view_of(const std::vector<float>& v) {
  return TensorView(v.data(), DType::f32, {static_cast<std::int64_t>(v.size())});
}

TEST(Histogram, FixedBinsFollowNumpyEdgeRule) {
  const std::vector<float> v = {0, 0.5f, 1, 1.5f, 2, NAN, INFINITY, -1, 3};
  const Histogram h = histogram_fixed(view_of(v), 4, 0.0, 2.0);
  EXPECT_EQ(h.edges, (std::vector<double>{0, 0.5, 1, 1.5, 2}));
  EXPECT_EQ(h.counts, (std::vector<std::int64_t>{1, 1, 1, 2}));  // 2.0 joins the last bin
  EXPECT_EQ(h.below, 1);
  EXPECT_EQ(h.above, 1);
  EXPECT_EQ(h.nan, 1);
  EXPECT_EQ(h.pos_inf, 1);
  EXPECT_EQ(h.total(), 9);
}

// count_outside against a plain loop on every SIMD target: lengths around the vector widths (the
// two-vector blocks and the scalar tail), a misaligned start, values on the bounds, NaN, +-Inf.
TEST(CountOutside, AgreesWithAPlainLoopOnEverySimdTarget) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> uniform(-0.2f, 1.2f);
  std::uniform_int_distribution<int> kind(0, 19);
  std::vector<float> values(1 + 300);
  for (float& x : values) {
    const int k = kind(rng);
    x = k == 0 ? NAN : k == 1 ? INFINITY : k == 2 ? -INFINITY : k == 3 ? 0.1f : k == 4 ? 0.9f : uniform(rng);
  }
  const float low = 0.1f, high = 0.9f;
  for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
    SCOPED_TRACE(hwy::TargetName(target));
    hwy::SetSupportedTargetsForTest(target);
    for (const std::int64_t n : {0, 1, 7, 8, 15, 16, 17, 31, 32, 33, 64, 65, 300}) {
      for (const std::int64_t start : {0, 1}) {
        if (start + n > static_cast<std::int64_t>(values.size())) continue;
        std::int64_t expected = 0;
        for (std::int64_t i = start; i < start + n; ++i) {
          const float x = values[std::size_t(i)];
          expected += (x < low || x >= high) && std::isfinite(x);
        }
        EXPECT_EQ(count_outside(TensorView(values.data() + start, DType::f32, {n}), low, high), expected)
            << "n " << n << " start " << start;
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);  // back to what the CPU supports
}

// Strided views and other dtypes compare in f64, in logical order.
TEST(CountOutside, StridedAndOtherDtypes) {
  const std::vector<double> d = {-1.0, 0.25, 0.5, 0.75, 1.0, NAN, -INFINITY, 0.0};
  EXPECT_EQ(count_outside(TensorView(d.data(), DType::f64, {8}), 0.25, 0.75), 4);  // -1, 0.75, 1, 0
  const std::vector<float> m = {0.0f, 0.5f, 1.0f, 0.5f, 0.5f, 0.5f};  // 2 x 3; its columns: strided
  const TensorView columns = TensorView(m.data(), DType::f32, {2, 3}).transposed(0, 1);
  EXPECT_EQ(count_outside(columns, 0.25, 0.75), 2);
  EXPECT_EQ(count_outside(TensorView(m.data(), DType::f32, {0}), 0.25, 0.75), 0);
}

TEST(Histogram, FixedBinsOverDataRange) {
  const std::vector<float> v = {1, 2, 3, 4, -INFINITY};
  const Histogram h = histogram_fixed(view_of(v), 2);
  EXPECT_EQ(h.edges, (std::vector<double>{1, 2.5, 4}));
  EXPECT_EQ(h.counts, (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(h.neg_inf, 1);
  EXPECT_THROW(histogram_fixed(view_of(v), 0, 0, 1), Error);
  EXPECT_THROW(histogram_fixed(view_of(v), 3, 2, 1), Error);
}

// Regression (found by fuzz/histogram_fuzz.cpp): hi - lo overflows for the full f64 range.
TEST(Histogram, FullDoubleRangeDoesNotOverflow) {
  const std::vector<double> v = {-DBL_MAX, -1.0, 0.0, 1e300, DBL_MAX};
  const Histogram h = histogram_fixed(TensorView(v.data(), DType::f64, {5}), 4, -DBL_MAX, DBL_MAX);
  EXPECT_EQ(h.edges.front(), -DBL_MAX);
  EXPECT_EQ(h.edges[2], 0.0);
  EXPECT_EQ(h.edges.back(), DBL_MAX);
  EXPECT_EQ(h.counts, (std::vector<std::int64_t>{1, 1, 2, 1}));
}

TEST(Histogram, TensorFlowDefaultLimits) {
  const auto& limits = tensorflow_bucket_limits();
  ASSERT_EQ(limits.size(), 1551u);
  EXPECT_EQ(limits[775], 0.0);
  EXPECT_EQ(limits[776], 1e-12);
  EXPECT_EQ(limits[774], -1e-12);
  EXPECT_EQ(limits.back(), DBL_MAX);
  EXPECT_EQ(limits.front(), -DBL_MAX);
  EXPECT_GT(limits[1549], 9.9e19);
  EXPECT_LT(limits[1549], 1e20);
  for (std::size_t i = 1; i < limits.size(); ++i) {
    ASSERT_LT(limits[i - 1], limits[i]) << i;
    ASSERT_EQ(limits[i], -limits[limits.size() - 1 - i]) << i;
  }
}

// Note [TensorFlow bucket index]: the direct index agrees with std::upper_bound everywhere,
// above all at and next to every limit.
TEST(Histogram, TensorFlowBucketsAgreeWithBinarySearch) {
  const auto& limits = tensorflow_bucket_limits();
  std::vector<double> v = {0.0,      -0.0,      DBL_MAX, -DBL_MAX, DBL_MIN, -DBL_MIN,
                           4.9e-324, -4.9e-324, 1e20,    -1e20,    1e300};
  for (const double limit : limits) {
    v.push_back(limit);
    v.push_back(std::nextafter(limit, -INFINITY));
    v.push_back(std::nextafter(limit, INFINITY));
  }
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> exponent(-320, 305);
  for (int i = 0; i < 200000; ++i) v.push_back((i % 2 ? -1 : 1) * std::pow(10.0, exponent(rng)));
  const Histogram h = histogram_tensorflow(TensorView(v.data(), DType::f64, {std::int64_t(v.size())}));
  std::vector<std::int64_t> expected(limits.size(), 0);
  for (const double x : v) {
    if (!std::isfinite(x)) continue;
    auto it = std::upper_bound(limits.begin(), limits.end(), x);
    if (it == limits.end()) --it;
    ++expected[std::size_t(it - limits.begin())];
  }
  EXPECT_EQ(h.counts, expected);
}

TEST(Histogram, TensorFlowBucketsCountBelowTheirLimit) {
  const std::vector<double> v = {0.0, 1e-12, -0.5, 1.0, NAN};
  const Histogram h = histogram_tensorflow(TensorView(v.data(), DType::f64, {5}));
  const auto& limits = h.edges;
  EXPECT_EQ(h.counts[776], 1);  // 0 < 1e-12
  EXPECT_EQ(h.counts[777], 1);  // 1e-12 is not below its own limit
  const auto index_of = [&](double x) {
    return static_cast<std::size_t>(std::upper_bound(limits.begin(), limits.end(), x) - limits.begin());
  };
  EXPECT_EQ(h.counts[index_of(-0.5)], 1);
  EXPECT_LT(limits[index_of(1.0) - 1], 1.0 + 1e-9);
  EXPECT_EQ(h.counts[index_of(1.0)], 1);
  EXPECT_EQ(h.nan, 1);
  EXPECT_EQ(h.total(), 5);
}

TEST(Histogram, Log2MagnitudeBins) {
  const std::vector<float> v = {1, 1.5f, 2, 3, 4, -0.25f, 0, -0.0f, 0x1p-149f, NAN};
  const Log2Histogram h = histogram_log2(view_of(v));
  EXPECT_EQ(h.min_exponent, -149);
  ASSERT_EQ(h.counts.size(), 152u);
  EXPECT_EQ(h.counts[0], 1);        // 2^-149, the smallest f32 subnormal
  EXPECT_EQ(h.counts[149 - 2], 1);  // 0.25
  EXPECT_EQ(h.counts[149 + 0], 2);  // 1, 1.5
  EXPECT_EQ(h.counts[149 + 1], 2);  // 2, 3
  EXPECT_EQ(h.counts[149 + 2], 1);  // 4
  EXPECT_EQ(h.zero, 2);
  EXPECT_EQ(h.nan, 1);
}

}  // namespace
}  // namespace tfdebug
