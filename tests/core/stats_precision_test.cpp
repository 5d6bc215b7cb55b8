// Mean and variance against exact references on hard inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "tfdebug/core/stats.hpp"

namespace tfdebug {
namespace {

__extension__ typedef __int128 Int128;  // exact reference sums

// 10^8 values 1e8 + k * 2^-26 with integer k in [-2^20, 2^20]: every value is an exact multiple
// of 2^-26, so sums of deviations are exact in 128-bit integers and the reference is exact.
TEST(StatsPrecision, HundredMillionValuesNearOneE8AreExactTo1e12) {
  constexpr std::int64_t n = 100'000'000;
  std::vector<double> values(static_cast<std::size_t>(n));
  std::mt19937_64 rng(42);
  std::int64_t sum_k = 0;
  Int128 sum_k2 = 0;
  for (double& x : values) {
    const std::int64_t k = static_cast<std::int64_t>(rng() % (2u * 1048576u + 1)) - 1048576;
    x = 1e8 + std::ldexp(static_cast<double>(k), -26);
    sum_k += k;
    sum_k2 += static_cast<Int128>(k) * k;
  }
  const long double exact_mean = 1e8L + std::ldexp(static_cast<long double>(sum_k) / n, -26);
  const Int128 numerator = static_cast<Int128>(n) * sum_k2 - static_cast<Int128>(sum_k) * sum_k;
  const long double exact_variance =
      std::ldexp(static_cast<long double>(numerator) / (static_cast<long double>(n) * n), -52);

  for (int threads : {1, 2}) {
    StatsOptions options;
    options.threads = threads;
    const Stats s = compute_stats(TensorView(values.data(), DType::f64, {n}), options);
    EXPECT_LE(std::fabs((s.mean - exact_mean) / exact_mean), 1e-12L);
    EXPECT_LE(std::fabs((s.variance - exact_variance) / exact_variance), 1e-12L)
        << "variance " << s.variance << " exact " << static_cast<double>(exact_variance);
    EXPECT_LE(std::fabs((s.std - std::sqrt(exact_variance)) / std::sqrt(exact_variance)), 1e-12L);
  }
}

// A first element far from the rest defeats a naive shift: the re-centring must kick in.
TEST(StatsPrecision, OutlierFirstElementDoesNotCostPrecision) {
  std::vector<double> values(1'000'000);
  std::mt19937_64 rng(9);
  std::int64_t sum_k = 0;
  Int128 sum_k2 = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::int64_t k = static_cast<std::int64_t>(rng() % 2001) - 1000;
    values[i] = std::ldexp(static_cast<double>(k), -10);
    sum_k += k;
    sum_k2 += static_cast<Int128>(k) * k;
  }
  // Element 0 of every chunk becomes a large outlier; add it to the exact sums too.
  const std::int64_t big = std::int64_t{1} << 40;  // 2^30 after the 2^-10 scale
  for (std::size_t i = 0; i < values.size(); i += 16384) {
    const auto k0 = static_cast<std::int64_t>(std::ldexp(values[i], 10));
    sum_k += big - k0;
    sum_k2 += static_cast<Int128>(big) * big - static_cast<Int128>(k0) * k0;
    values[i] = std::ldexp(static_cast<double>(big), -10);
  }
  const auto n = static_cast<std::int64_t>(values.size());
  const Int128 numerator = static_cast<Int128>(n) * sum_k2 - static_cast<Int128>(sum_k) * sum_k;
  const long double exact_variance =
      std::ldexp(static_cast<long double>(numerator) / (static_cast<long double>(n) * n), -20);
  const Stats s = compute_stats(TensorView(values.data(), DType::f64, {n}));
  EXPECT_LE(std::fabs((s.variance - exact_variance) / exact_variance), 1e-12L);
}

// f32 data: exact mode agrees with a long-double two-pass reference to ~1e-15; the default
// fast mode (f32 block partials) stays within its documented 1e-7 and is ~1e-9 here.
TEST(StatsPrecision, F32MeanAndVarianceAgainstLongDoubleTwoPass) {
  std::vector<float> values(10'000'000);
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(1e4f, 0.5f);
  for (float& x : values) x = normal(rng);
  long double sum = 0;
  for (float x : values) sum += x;
  const long double mean = sum / values.size();
  long double m2 = 0;
  for (float x : values) m2 += (x - mean) * (x - mean);
  const long double variance = m2 / values.size();
  const TensorView view(values.data(), DType::f32, {static_cast<std::int64_t>(values.size())});
  StatsOptions exact;
  exact.exact = true;
  const Stats e = compute_stats(view, exact);
  EXPECT_LE(std::fabs((e.mean - mean) / mean), 1e-13L);
  EXPECT_LE(std::fabs((e.variance - variance) / variance), 1e-11L);
  const Stats f = compute_stats(view);
  EXPECT_LE(std::fabs((f.mean - mean) / mean), 1e-7L);
  EXPECT_LE(std::fabs((f.variance - variance) / variance), 1e-7L);
}

}  // namespace
}  // namespace tfdebug
