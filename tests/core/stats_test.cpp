#include "tfdebug/core/stats.hpp"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "stats_test_util.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/tensor.hpp"

namespace tfdebug {
namespace {

using testing::expect_identical;
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

Stats stats_of(const std::vector<float>& v, StatsOptions options = {}) {
  return compute_stats(TensorView(v.data(), DType::f32, {static_cast<std::int64_t>(v.size())}), options);
}

TEST(Stats, GoldenValuesWithEveryClassOfValue) {
  const float tiny = 1e-40f;  // an f32 subnormal
  const std::vector<float> v = {1, -2, 0, kNaN, kInf, -kInf, 3, tiny, -0.0f};
  StatsOptions options;
  options.target = DType::f16;
  const Stats s = stats_of(v, options);
  EXPECT_EQ(s.count, 9);
  EXPECT_EQ(s.nan, 1);
  EXPECT_EQ(s.pos_inf, 1);
  EXPECT_EQ(s.neg_inf, 1);
  EXPECT_EQ(s.zero, 2);
  EXPECT_EQ(s.subnormal, 1);
  EXPECT_EQ(s.negative, 1);
  EXPECT_EQ(s.positive, 3);
  EXPECT_EQ(s.finite(), 6);
  EXPECT_EQ(s.min, -2.0);
  EXPECT_EQ(s.max, 3.0);
  EXPECT_EQ(s.abs_max, 3.0);
  EXPECT_EQ(s.min_abs_nonzero, static_cast<double>(tiny));
  EXPECT_DOUBLE_EQ(s.mean, 2.0 / 6.0);
  EXPECT_DOUBLE_EQ(s.variance, 20.0 / 9.0);
  EXPECT_DOUBLE_EQ(s.std, std::sqrt(20.0 / 9.0));
  EXPECT_DOUBLE_EQ(s.l1, 6.0);
  EXPECT_DOUBLE_EQ(s.l2, std::sqrt(14.0));
  EXPECT_DOUBLE_EQ(s.range_used, 3.0 / FLT_MAX);
  ASSERT_TRUE(s.target.has_value());
  EXPECT_EQ(s.target->overflow, 0);
  EXPECT_EQ(s.target->underflow, 1);
  EXPECT_EQ(s.target->subnormal, 1);
  EXPECT_DOUBLE_EQ(s.target->range_used, 3.0 / 65504.0);
  EXPECT_DOUBLE_EQ(s.target->underflow_fraction, 1.0 / 9.0);
}

TEST(Stats, F16TargetBoundaries) {
  const std::vector<float> v = {65504.0f, 65505.0f, -70000.0f, 0x1p-25f, 0x1.8p-25f, 0x1p-24f, 1e-5f};
  StatsOptions options;
  options.target = DType::f16;
  const Stats s = stats_of(v, options);
  EXPECT_EQ(s.target->overflow, 2);   // 65505 and -70000; 65504 is f16's largest finite value
  EXPECT_EQ(s.target->underflow, 1);  // 2^-25 is half the smallest subnormal: rounds to 0
  EXPECT_EQ(s.target->subnormal, 4);  // below 2^-14
  EXPECT_DOUBLE_EQ(s.target->overflow_fraction, 2.0 / 7.0);
  EXPECT_DOUBLE_EQ(s.target->range_used, 70000.0 / 65504.0);
}

TEST(Stats, Fp8TargetBoundaries) {
  const std::vector<float> v = {448.0f, 449.0f, 0x1p-10f, 0.001f, 0.01f, 1.0f};
  StatsOptions options;
  options.target = DType::f8_e4m3fn;
  const Stats s = stats_of(v, options);
  EXPECT_EQ(s.target->overflow, 1);
  EXPECT_EQ(s.target->underflow, 1);
  EXPECT_EQ(s.target->subnormal, 3);
  options.target = DType::f8_e5m2;
  const Stats t = stats_of(v, options);
  EXPECT_EQ(t.target->overflow, 0);
  EXPECT_EQ(t.target->underflow, 0);
  EXPECT_DOUBLE_EQ(t.target->range_used, 449.0 / 57344.0);
}

TEST(Stats, RejectsIntegerTargetAndUnknownSimd) {
  StatsOptions options;
  options.target = DType::i8;
  EXPECT_THROW(stats_of({1.0f}, options), Error);
  StatsOptions bad_simd;
  bad_simd.simd = "NEON9";
  EXPECT_THROW(stats_of({1.0f}, bad_simd), Error);
}

TEST(Stats, NormsDoNotOverflowNearF32Max) {
  const std::vector<float> v = {FLT_MAX, -FLT_MAX, FLT_MAX};
  const Stats s = stats_of(v);
  const double m = FLT_MAX;
  EXPECT_DOUBLE_EQ(s.l2, m * std::sqrt(3.0));
  EXPECT_DOUBLE_EQ(s.l1, 3 * m);
  EXPECT_DOUBLE_EQ(s.mean, m / 3);
  EXPECT_DOUBLE_EQ(s.variance, 8 * m * m / 9);
  EXPECT_DOUBLE_EQ(s.range_used, 1.0);
}

TEST(Stats, F64NearMaxKeepsTheMeanFinite) {
  const std::vector<double> v = {DBL_MAX, DBL_MAX / 2, DBL_MAX};
  const Stats s = compute_stats(TensorView(v.data(), DType::f64, {3}));
  EXPECT_DOUBLE_EQ(s.mean, DBL_MAX / 6 * 5);
  EXPECT_EQ(s.max, DBL_MAX);
  EXPECT_TRUE(std::isinf(s.l1));  // the true L1 exceeds DBL_MAX
  EXPECT_FALSE(std::isnan(s.variance));
}

TEST(Stats, EmptyAllNanAndAllInf) {
  const Stats empty = stats_of({});
  EXPECT_EQ(empty.count, 0);
  EXPECT_TRUE(std::isnan(empty.min));
  EXPECT_TRUE(std::isnan(empty.mean));
  EXPECT_EQ(empty.l1, 0.0);
  const Stats nans = stats_of({kNaN, kNaN, kNaN});
  EXPECT_EQ(nans.nan, 3);
  EXPECT_EQ(nans.finite(), 0);
  EXPECT_TRUE(std::isnan(nans.max));
  EXPECT_TRUE(std::isnan(nans.std));
  const Stats infs = stats_of({kInf, -kInf, kInf});
  EXPECT_EQ(infs.pos_inf, 2);
  EXPECT_EQ(infs.neg_inf, 1);
  EXPECT_TRUE(std::isnan(infs.abs_max));
}

TEST(Stats, NanAndInfNeverPoisonFiniteStatistics) {
  std::vector<float> v(100000);
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(5.0f, 2.0f);
  for (float& x : v) x = normal(rng);
  StatsOptions exact;
  exact.exact = true;
  const Stats clean = stats_of(v, exact);
  std::vector<float> dirty = v;
  dirty.insert(dirty.begin() + 500, kNaN);
  dirty.insert(dirty.begin() + 70000, kInf);
  dirty.push_back(-kInf);
  const Stats s = stats_of(dirty, exact);
  EXPECT_EQ(s.nonfinite(), 3);
  EXPECT_EQ(s.min, clean.min);
  EXPECT_EQ(s.max, clean.max);
  EXPECT_NEAR(s.mean, clean.mean, 1e-12);
  EXPECT_NEAR(s.variance, clean.variance, 1e-11);
}

// Regression (found by fuzz/stats_fuzz.cpp): squares of deviations ~1e-32 underflow f32.
TEST(Stats, TinyValuesKeepTheirVariance) {
  const std::uint16_t bf16[] = {0x0A91, 0x0393};  // ~9.3e-33 and ~8.6e-37
  const double a = bf16_to_f32(0x0A91);
  const double b = bf16_to_f32(0x0393);
  const Stats s = compute_stats(TensorView(bf16, DType::bf16, {2}));
  EXPECT_DOUBLE_EQ(s.variance, (a - b) * (a - b) / 4);
  std::vector<float> gradients(50000);
  std::mt19937 rng(4);
  std::normal_distribution<float> normal(0.0f, 1e-25f);
  for (float& g : gradients) g = normal(rng);
  StatsOptions exact;
  exact.exact = true;
  const Stats fast = stats_of(gradients);
  const Stats reference = stats_of(gradients, exact);
  EXPECT_GT(fast.std, 0.9e-25);
  EXPECT_NEAR(fast.std, reference.std, 1e-12 * reference.std);
}

// Regression (found by fuzz/stats_fuzz.cpp): one outlier followed by constants made the shift
// cancel ~50x, amplifying f32 rounding in the fast moments to 1e-6.
TEST(Stats, OutlierThenConstantsInFastMode) {
  std::vector<std::uint8_t> fp8(51, 0x06);  // 6 * 2^-9
  fp8[0] = 0xDB;                            // -22
  const TensorView view(fp8.data(), DType::f8_e4m3fn, {51});
  StatsOptions exact;
  exact.exact = true;
  const Stats fast = compute_stats(view);
  const Stats reference = compute_stats(view, exact);
  const double mean = (-22.0 + 50 * 6 * 0x1p-9) / 51;
  EXPECT_DOUBLE_EQ(reference.mean, mean);
  EXPECT_NEAR(fast.variance, reference.variance, 1e-7 * reference.variance);
  EXPECT_NEAR(fast.l2, reference.l2, 1e-7 * reference.l2);
}

TEST(Stats, IntegersAndBool) {
  const std::vector<std::int32_t> ints = {-5, 0, 7, 2147483647};
  const Stats s = compute_stats(TensorView(ints.data(), DType::i32, {4}));
  EXPECT_EQ(s.min, -5.0);
  EXPECT_EQ(s.max, 2147483647.0);
  EXPECT_DOUBLE_EQ(s.mean, 2147483649.0 / 4);
  EXPECT_EQ(s.zero, 1);
  EXPECT_EQ(s.negative, 1);
  EXPECT_EQ(s.positive, 2);
  EXPECT_EQ(s.subnormal, 0);
  EXPECT_DOUBLE_EQ(s.range_used, 2147483647.0 / 2147483647.0);
  const std::uint8_t flags[] = {0, 1, 2};
  const Stats b = compute_stats(TensorView(flags, DType::boolean, {3}));
  EXPECT_EQ(b.zero, 1);
  EXPECT_EQ(b.positive, 2);
  EXPECT_DOUBLE_EQ(b.mean, 2.0 / 3.0);
  EXPECT_EQ(b.max, 1.0);
}

TEST(Stats, NarrowFloatsClassifyAgainstTheirOwnRange) {
  // f16: 1.0, the smallest subnormal, -inf, NaN, the largest finite.
  const std::uint16_t h[] = {0x3C00, 0x0001, 0xFC00, 0x7E00, 0x7BFF};
  const Stats s = compute_stats(TensorView(h, DType::f16, {5}));
  EXPECT_EQ(s.subnormal, 1);
  EXPECT_EQ(s.neg_inf, 1);
  EXPECT_EQ(s.nan, 1);
  EXPECT_EQ(s.max, 65504.0);
  EXPECT_EQ(s.min_abs_nonzero, 0x1p-24);
  EXPECT_DOUBLE_EQ(s.range_used, 1.0);
  // fp8 e4m3fn: 448 (max), NaN (0x7F), the smallest subnormal 2^-9.
  const std::uint8_t e4[] = {0x7E, 0x7F, 0x01, 0xFF};
  const Stats f = compute_stats(TensorView(e4, DType::f8_e4m3fn, {4}));
  EXPECT_EQ(f.nan, 2);
  EXPECT_EQ(f.max, 448.0);
  EXPECT_EQ(f.subnormal, 1);
  EXPECT_EQ(f.min_abs_nonzero, 0x1p-9);
}

std::vector<float> random_floats(std::size_t n, unsigned seed) {
  std::vector<float> v(n);
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.5f, 3.0f);
  for (float& x : v) x = normal(rng);
  return v;
}

TEST(Stats, StridedViewsMatchContiguousCopiesBitForBit) {
  const auto data = random_floats(300 * 257, 1);
  const TensorView v(data.data(), DType::f32, {300, 257});
  const std::vector<TensorView> views = {v.transposed(0, 1), v.sliced(1, 3, 250, 7), v.flipped(0),
                                         v.flipped(1).sliced(0, 10, 290, 3)};
  for (const TensorView& view : views) {
    SCOPED_TRACE(view.describe());
    const Tensor copy = Tensor::copy_of(view);
    StatsOptions options;
    options.target = DType::bf16;
    expect_identical(compute_stats(view, options), compute_stats(copy.view(), options));
  }
}

// Note [Broadcast views]: a view that repeats its elements is summed over the stored ones, so
// it agrees with its copy exactly in counts and range, and to rounding in the sums.
TEST(Stats, BroadcastViewsMatchContiguousCopiesToRounding) {
  const auto data = random_floats(300 * 257, 1);
  const TensorView view = TensorView(data.data(), DType::f32, {300, 257}).sliced(0, 5, 6).broadcast(0, 1000);
  const Tensor copy = Tensor::copy_of(view);
  StatsOptions options;
  options.target = DType::bf16;
  const Stats a = compute_stats(view, options);
  const Stats b = compute_stats(copy.view(), options);
  EXPECT_EQ(a.count, b.count);
  EXPECT_EQ(a.zero, b.zero);
  EXPECT_EQ(a.negative, b.negative);
  EXPECT_EQ(a.subnormal, b.subnormal);
  EXPECT_EQ(a.target->underflow, b.target->underflow);
  EXPECT_EQ(a.min, b.min);
  EXPECT_EQ(a.abs_max, b.abs_max);
  for (const auto& [x, y] : {std::pair{a.mean, b.mean}, {a.variance, b.variance}, {a.l1, b.l1}, {a.l2, b.l2}})
    EXPECT_NEAR(x, y, 1e-6 * std::fabs(y));
}

TEST(Stats, MisalignedStartsMatchAlignedData) {
  const auto data = random_floats(50001, 2);
  for (std::size_t offset = 1; offset < 8; ++offset) {
    std::vector<unsigned char> bytes(data.size() * sizeof(float) + 16);
    std::memcpy(bytes.data() + offset, data.data(), data.size() * sizeof(float));
    const Stats misaligned = compute_stats(
        TensorView(bytes.data() + offset, DType::f32, {static_cast<std::int64_t>(data.size())}));
    expect_identical(misaligned, stats_of(data));
  }
}

TEST(Stats, ResultDoesNotDependOnThreadCount) {
  auto data = random_floats(3'000'001, 3);
  data[12345] = kNaN;
  data[2'999'999] = -kInf;
  StatsOptions one;
  one.threads = 1;
  const Stats reference = stats_of(data, one);
  for (int threads : {2, 3, 8, 0}) {
    SCOPED_TRACE(threads);
    StatsOptions options;
    options.threads = threads;
    expect_identical(stats_of(data, options), reference);
  }
}

}  // namespace
}  // namespace tfdebug
