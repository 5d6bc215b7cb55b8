// Note [Broadcast views]: statistics, histograms and comparisons of views with zero strides are
// those of the whole view (checked against a contiguous copy), at the cost of the stored
// elements (checked by a view of 2^40 elements over 4 values, which a pass over every element
// would take hours to finish).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tfdebug/core/compare.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/histogram.hpp"
#include "tfdebug/core/stats.hpp"
#include "tfdebug/core/tensor.hpp"

namespace tfdebug {
namespace {

const std::vector<float> kValues = {1.5f, -2.0f, 0.0f, std::nanf(""), 3.25f, -0.5f};

// kValues[c] at [r, c] for r < rows: a [rows, 6] view with a zero row stride.
TensorView repeated_rows(std::int64_t rows) {
  const std::int64_t shape[] = {rows, 6};
  const std::int64_t strides[] = {0, 1};
  return TensorView(kValues.data(), DType::f32, shape, strides);
}

TEST(BroadcastViews, DistinctElementsDropTheRepeatedDimensions) {
  std::int64_t repeats = 0;
  const TensorView d = distinct_elements(repeated_rows(7), repeats);
  EXPECT_EQ(repeats, 7);
  EXPECT_EQ(d.shape(0), 1);
  EXPECT_EQ(d.shape(1), 6);
  const TensorView plain(kValues.data(), DType::f32, {6});
  EXPECT_EQ(distinct_elements(plain, repeats).numel(), 6);
  EXPECT_EQ(repeats, 1);
}

TEST(BroadcastViews, StatsEqualThoseOfAContiguousCopy) {
  const TensorView view = repeated_rows(5);
  const Tensor copy = Tensor::copy_of(view);
  StatsOptions options;
  options.target = DType::f16;
  const Stats a = compute_stats(view, options);
  const Stats b = compute_stats(copy.view(), options);
  EXPECT_EQ(a.count, 30);
  EXPECT_EQ(a.count, b.count);
  EXPECT_EQ(a.nan, b.nan);
  EXPECT_EQ(a.zero, b.zero);
  EXPECT_EQ(a.negative, b.negative);
  EXPECT_EQ(a.positive, b.positive);
  EXPECT_EQ(a.target->overflow, b.target->overflow);
  EXPECT_EQ(a.min, b.min);
  EXPECT_EQ(a.max, b.max);
  EXPECT_DOUBLE_EQ(a.mean, b.mean);
  EXPECT_DOUBLE_EQ(a.variance, b.variance);
  EXPECT_DOUBLE_EQ(a.l1, b.l1);
  EXPECT_DOUBLE_EQ(a.l2, b.l2);
}

TEST(BroadcastViews, HistogramCountsEveryOccurrence) {
  const TensorView view = repeated_rows(4);
  const Tensor copy = Tensor::copy_of(view);
  const Histogram a = histogram_fixed(view, 5, -2.0, 3.25);
  const Histogram b = histogram_fixed(copy.view(), 5, -2.0, 3.25);
  EXPECT_EQ(a.counts, b.counts);
  EXPECT_EQ(a.nan, 4);
  EXPECT_EQ(a.total(), 24);
}

TEST(BroadcastViews, TwoToTheFortyElementsCostTheirStoredOnes) {
  const std::int64_t shape[] = {std::int64_t{1} << 20, std::int64_t{1} << 20};
  const std::int64_t strides[] = {0, 0};
  const float one = 1.5f;
  const TensorView view(&one, DType::f32, shape, strides);
  const Stats s = compute_stats(view);
  EXPECT_EQ(s.count, std::int64_t{1} << 40);
  EXPECT_EQ(s.positive, std::int64_t{1} << 40);
  EXPECT_EQ(s.mean, 1.5);
  EXPECT_DOUBLE_EQ(s.l1, 1.5 * std::ldexp(1.0, 40));
  EXPECT_DOUBLE_EQ(s.l2, 1.5 * std::ldexp(1.0, 20));
  const Comparison c = compare_tensors(view, view);
  EXPECT_EQ(c.count, std::int64_t{1} << 40);
  EXPECT_TRUE(c.allclose);
  EXPECT_DOUBLE_EQ(c.l2_a, s.l2);
}

TEST(BroadcastViews, ComparisonAgreesWithContiguousCopies) {
  const TensorView a = repeated_rows(3);
  std::vector<float> other = kValues;
  other[4] = 3.5f;
  const std::int64_t shape[] = {3, 6};
  const std::int64_t strides[] = {0, 1};
  const TensorView b(other.data(), DType::f32, shape, strides);
  const Comparison x = compare_tensors(a, b);
  const Tensor ca = Tensor::copy_of(a);
  const Tensor cb = Tensor::copy_of(b);
  const Comparison y = compare_tensors(ca.view(), cb.view());
  EXPECT_EQ(x.count, y.count);
  EXPECT_EQ(x.mismatches, 3);
  EXPECT_EQ(x.mismatches, y.mismatches);
  EXPECT_EQ(x.first_mismatch, y.first_mismatch);
  EXPECT_DOUBLE_EQ(x.max_abs_diff, y.max_abs_diff);
  EXPECT_DOUBLE_EQ(x.l2_diff, y.l2_diff);
  EXPECT_DOUBLE_EQ(x.cosine, y.cosine);
}

TEST(BroadcastViews, ViewsRepeatingAlongDifferentDimensionsAreRefused) {
  std::vector<float> row(1 << 13, 1.0f);
  const std::int64_t shape[] = {std::int64_t{1} << 13, std::int64_t{1} << 13};
  const std::int64_t rows[] = {0, 1};
  const std::int64_t columns[] = {1, 0};
  const TensorView a(row.data(), DType::f32, shape, rows);
  const TensorView b(row.data(), DType::f32, shape, columns);
  EXPECT_THROW(compare_tensors(a, b), Error);
}

}  // namespace
}  // namespace tfdebug
