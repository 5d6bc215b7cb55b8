#include "tfdebug/core/quantile.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "tfdebug/core/error.hpp"

namespace tfdebug {
namespace {

TensorView view_of(const std::vector<double>& v) {
  return TensorView(v.data(), DType::f64, {static_cast<std::int64_t>(v.size())});
}

TEST(Quantile, ExactMatchesNumpyLinear) {
  // numpy.quantile([3, 1, 4, 1, 5, 9, 2, 6], [0, 0.1, 0.5, 0.9, 1]) = [1, 1, 3.5, 6.9, 9]
  const std::vector<double> v = {3, 1, 4, 1, 5, 9, 2, 6, NAN, INFINITY};
  const auto q = quantiles_exact(view_of(v), {0.0, 0.1, 0.5, 0.9, 1.0});
  EXPECT_DOUBLE_EQ(q[0], 1.0);
  EXPECT_DOUBLE_EQ(q[1], 1.0);
  EXPECT_DOUBLE_EQ(q[2], 3.5);
  EXPECT_DOUBLE_EQ(q[3], 6.9);
  EXPECT_DOUBLE_EQ(q[4], 9.0);
  const std::vector<double> w = {1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(quantiles_exact(view_of(w), {0.25})[0], 1.75);
}

TEST(Quantile, ExactRejectsBadInput) {
  const std::vector<double> v = {1, 2};
  EXPECT_THROW(quantiles_exact(view_of(v), {1.5}), Error);
  const std::vector<double> nans = {NAN};
  EXPECT_THROW(quantiles_exact(view_of(nans), {0.5}), Error);
}

std::vector<double> mixed_data(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::lognormal_distribution<double> lognormal(0.0, 4.0);
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    switch (i % 5) {
      case 0:
        v[i] = normal(rng);
        break;
      case 1:
        v[i] = lognormal(rng);
        break;
      case 2:
        v[i] = -lognormal(rng);
        break;
      case 3:
        v[i] = (i % 15 == 3) ? 0.0 : 1e-30 * normal(rng);
        break;
      default:
        v[i] = 1e6 + normal(rng);
        break;
    }
  }
  return v;
}

TEST(Quantile, SketchHonoursItsRelativeErrorBound) {
  const auto data = mixed_data(200'000, 11);
  for (int bits : {4, 7, 10}) {
    QuantileSketch sketch(bits);
    sketch.add(view_of(data));
    EXPECT_EQ(sketch.count(), static_cast<std::int64_t>(data.size()));
    std::vector<double> sorted = data;
    std::sort(sorted.begin(), sorted.end());
    const double alpha = sketch.relative_accuracy();
    EXPECT_EQ(alpha, std::ldexp(1.0, -(bits + 1)));
    for (int i = 0; i <= 1000; ++i) {
      const double p = i / 1000.0;
      const auto k = static_cast<std::size_t>(std::floor(p * static_cast<double>(sorted.size() - 1)));
      const double exact = sorted[k];
      ASSERT_LE(std::fabs(sketch.quantile(p) - exact), alpha * std::fabs(exact))
          << "bits " << bits << " p " << p << " exact " << exact;
    }
    // Memory does not grow with the data: bounded by the exponent ranges present.
    EXPECT_LT(sketch.buckets_in_use(), std::size_t{2 * 260} << bits);
  }
}

TEST(Quantile, SketchMergeEqualsOneSketch) {
  const auto data = mixed_data(50'000, 12);
  QuantileSketch whole;
  whole.add(view_of(data));
  QuantileSketch left;
  QuantileSketch right;
  const std::vector<double> a(data.begin(), data.begin() + 20'000);
  const std::vector<double> b(data.begin() + 20'000, data.end());
  left.add(view_of(a));
  right.add(view_of(b));
  left.merge(right);
  for (double p : {0.0, 0.01, 0.25, 0.5, 0.75, 0.99, 1.0}) {
    EXPECT_EQ(left.quantile(p), whole.quantile(p)) << p;
  }
  QuantileSketch other_precision(5);
  EXPECT_THROW(left.merge(other_precision), Error);
  EXPECT_THROW(QuantileSketch().quantile(0.5), Error);
  EXPECT_THROW(QuantileSketch(0), Error);
}

}  // namespace
}  // namespace tfdebug
