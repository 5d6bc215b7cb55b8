#include "tfdebug/core/compare.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tfdebug/core/dtype.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug {
namespace {

TEST(Compare, GoldenValues) {
  const std::vector<float> a = {1, 0, 3, 4};
  const std::vector<float> b = {1, 0, 3, 4.5f};
  const Comparison c =
      compare_tensors(TensorView(a.data(), DType::f32, {2, 2}), TensorView(b.data(), DType::f32, {2, 2}));
  EXPECT_FALSE(c.allclose);
  EXPECT_EQ(c.mismatches, 1);
  EXPECT_EQ(c.first_mismatch, (std::vector<std::int64_t>{1, 1}));
  EXPECT_DOUBLE_EQ(c.max_abs_diff, 0.5);
  EXPECT_DOUBLE_EQ(c.max_rel_diff, 0.5 / 4.5);
  EXPECT_DOUBLE_EQ(c.l2_a, std::sqrt(26.0));
  EXPECT_DOUBLE_EQ(c.cosine, (1 + 9 + 18.0) / (std::sqrt(26.0) * std::sqrt(1 + 9 + 20.25)));
  EXPECT_DOUBLE_EQ(c.relative_l2, 0.5 / std::sqrt(26.0));
  // Orthogonal vectors; tolerances as numpy.isclose: |a - b| <= atol + rtol * |b|.
  const std::vector<double> x = {1, 0}, y = {0, 1};
  EXPECT_DOUBLE_EQ(
      compare_tensors(TensorView(x.data(), DType::f64, {2}), TensorView(y.data(), DType::f64, {2})).cosine,
      0.0);
  const std::vector<double> p = {100.0}, q = {100.1};
  EXPECT_TRUE(
      compare_tensors(TensorView(p.data(), DType::f64, {1}), TensorView(q.data(), DType::f64, {1}), 1e-3, 0)
          .allclose);
  EXPECT_FALSE(
      compare_tensors(TensorView(p.data(), DType::f64, {1}), TensorView(q.data(), DType::f64, {1}), 1e-4, 0)
          .allclose);
}

TEST(Compare, NanEqualsNanAndInfOnlyItself) {
  const std::vector<double> a = {NAN, INFINITY, 1.0};
  const std::vector<double> b = {NAN, INFINITY, 1.0};
  const std::vector<double> c = {NAN, -INFINITY, 1.0};
  EXPECT_TRUE(
      compare_tensors(TensorView(a.data(), DType::f64, {3}), TensorView(b.data(), DType::f64, {3})).allclose);
  const Comparison d =
      compare_tensors(TensorView(a.data(), DType::f64, {3}), TensorView(c.data(), DType::f64, {3}));
  EXPECT_FALSE(d.allclose);
  EXPECT_EQ(d.first_mismatch, (std::vector<std::int64_t>{1}));
  EXPECT_EQ(d.finiteness_changes, 0);  // Inf -> -Inf stays non-finite
  const std::vector<double> e = {1.0, INFINITY, NAN};
  const Comparison f =
      compare_tensors(TensorView(a.data(), DType::f64, {3}), TensorView(e.data(), DType::f64, {3}));
  EXPECT_EQ(f.finiteness_changes, 2);  // NaN -> 1 and 1 -> NaN
  EXPECT_EQ(f.mismatches, 2);
}

TEST(Compare, MixedDtypesAndStridesCompareValues) {
  const std::vector<float> a = {1.5f, -2.0f, 0.25f, 8.0f};      // [[1.5, -2], [0.25, 8]]
  const std::uint16_t bt[] = {0x3FC0, 0x3E80, 0xC000, 0x4100};  // bf16 of the transpose
  const TensorView transposed = TensorView(bt, DType::bf16, {2, 2}).transposed(0, 1);
  const Comparison c = compare_tensors(TensorView(a.data(), DType::f32, {2, 2}), transposed, 0, 0);
  EXPECT_TRUE(c.allclose);
  EXPECT_DOUBLE_EQ(c.cosine, 1.0);
  EXPECT_THROW(compare_tensors(TensorView(a.data(), DType::f32, {4}), transposed), Error);
}

}  // namespace
}  // namespace tfdebug
