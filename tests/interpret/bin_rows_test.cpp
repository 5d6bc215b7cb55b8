// Tabular LIME's row draws (src/interpret/bin_rows.hpp): every copy of the loop this CPU runs
// (baseline, x86-64-v3, x86-64-v4) draws the same values and bits, and the tails of Phi are
// handed back to be inverted exactly.
#include "bin_rows.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <vector>

#include "lime_bins.hpp"

namespace tfdebug::interpret::detail {
namespace {

struct Arrays {
  std::array<std::vector<std::uint64_t>, 3> threshold;
  std::array<std::vector<double>, 4> cdf_low, cdf_width, lo, hi, mean, stdev;
  std::vector<std::int32_t> x_bins;
  BinArrays view() const {
    BinArrays a{};
    for (int k = 0; k < 4; ++k) {
      if (k < 3) a.threshold[k] = threshold[k].data();
      a.cdf_low[k] = cdf_low[k].data();
      a.cdf_width[k] = cdf_width[k].data();
      a.lo[k] = lo[k].data();
      a.hi[k] = hi[k].data();
      a.mean[k] = mean[k].data();
      a.stdev[k] = stdev[k].data();
    }
    a.x_bins = x_bins.data();
    return a;
  }
};

// 70 features (a block of 64 and one of 6), four bins each; bin 3 spans Phi's whole range, so
// its draws reach the tails.
Arrays make_arrays() {
  Arrays a;
  const std::size_t m = 70;
  for (std::size_t k = 0; k < 3; ++k)
    for (std::size_t j = 0; j < m; ++j) a.threshold[k].push_back((std::uint64_t{1} << 30) * (k + 1));
  for (std::size_t k = 0; k < 4; ++k) {
    for (std::size_t j = 0; j < m; ++j) {
      const double jj = static_cast<double>(j);
      a.cdf_low[k].push_back(k == 3 ? 1e-6 : 0.1 + 0.01 * static_cast<double>(k));
      a.cdf_width[k].push_back(k == 3 ? 1 - 2e-6 : 0.5);
      a.lo[k].push_back(k == 3 ? -5 : -1.2);
      a.hi[k].push_back(k == 3 ? 5 : 1.5);
      a.mean[k].push_back(jj + 10 * static_cast<double>(k));
      a.stdev[k].push_back(0.5 + 0.1 * static_cast<double>(k));
    }
  }
  for (std::size_t j = 0; j < m; ++j) a.x_bins.push_back(static_cast<std::int32_t>(j % 4));
  return a;
}

struct Draw {
  std::vector<float> values;
  std::vector<std::uint64_t> ones, outer;
};

Draw draw_rows(BinBlock block, const BinArrays& a) {
  Draw d;
  for (std::uint64_t row = 0; row < 200; ++row) {
    const std::uint64_t start = 0x1234567ULL * (row + 1);
    for (std::size_t begin = 0; begin < 70; begin += 64) {
      const std::size_t end = begin + 64 < 70 ? begin + 64 : 70;
      std::vector<float> values(end - begin);
      std::uint64_t outer = 0;
      d.ones.push_back(block(a, start, begin, end, values.data(), &outer));
      d.outer.push_back(outer);
      d.values.insert(d.values.end(), values.begin(), values.end());
    }
  }
  return d;
}

TEST(BinRows, EveryCopyOfTheLoopDrawsTheSameRows) {
  const Arrays arrays = make_arrays();
  const BinArrays a = arrays.view();
  const Draw baseline = draw_rows(bin_block_baseline, a);
  // The bits: x's bin is drawn about a quarter of the time; the tails of bin 3 about 2 x 2.4%.
  std::size_t ones = 0, outer = 0;
  for (const std::uint64_t b : baseline.ones) ones += static_cast<std::size_t>(__builtin_popcountll(b));
  for (const std::uint64_t b : baseline.outer) outer += static_cast<std::size_t>(__builtin_popcountll(b));
  EXPECT_GT(ones, 200U * 70 / 4 * 8 / 10);
  EXPECT_LT(ones, 200U * 70 / 4 * 12 / 10);
  EXPECT_GT(outer, 0U);
  EXPECT_LT(outer, 200U * 70 / 4 * 2 * 5 / 100);
  // Outside the tails, every value lies in its bin's [mean + lo sd, mean + hi sd] for some bin.
  std::size_t checked = 0;
  for (std::size_t r = 0; r < 200; ++r) {
    for (std::size_t j = 0; j < 70; ++j) {
      const std::uint64_t outer_bits = baseline.outer[2 * r + j / 64];
      if ((outer_bits >> (j % 64)) & 1) continue;
      const double v = baseline.values[r * 70 + j];
      bool inside = false;
      for (std::size_t k = 0; k < 4; ++k) {
        const double low = arrays.mean[k][j] + arrays.lo[k][j] * arrays.stdev[k][j];
        const double high = arrays.mean[k][j] + arrays.hi[k][j] * arrays.stdev[k][j];
        inside = inside || (v >= low - 1e-4 && v <= high + 1e-4);
      }
      ASSERT_TRUE(inside) << r << " " << j << " " << v;
      ++checked;
    }
  }
  EXPECT_GT(checked, 13000U);
#if TFDEBUG_BIN_ROWS_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2")) {
    const Draw v3 = draw_rows(bin_block_x86_64_v3, a);
    EXPECT_EQ(v3.values, baseline.values);
    EXPECT_EQ(v3.ones, baseline.ones);
    EXPECT_EQ(v3.outer, baseline.outer);
  }
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl")) {
    const Draw v4 = draw_rows(bin_block_x86_64_v4, a);
    EXPECT_EQ(v4.values, baseline.values);
    EXPECT_EQ(v4.ones, baseline.ones);
    EXPECT_EQ(v4.outer, baseline.outer);
  }
#endif
}

TEST(BinRows, QuartilesOnTwoThreadsAreTheSameBins) {
  // Note [Quartiles on two threads]: 300 rows of 40 features (12,000 values, enough for the
  // second thread); every column's bins, and so every draw, the same as on one thread.
  constexpr std::size_t rows = 300, features = 40;
  std::vector<float> training(rows * features);
  for (std::size_t i = 0; i < training.size(); ++i)
    training[i] = static_cast<float>((i * 2654435761U) % 1000) / 37.0f;  // spread, with ties
  const QuartileBins one(training, rows, features, false), two(training, rows, features, true);
  std::vector<std::int32_t> x_bins(features);
  for (std::size_t j = 0; j < features; ++j) {
    x_bins[j] = one.bin_of(j, training[j]);
    for (const double v : {0.0, 5.0, 13.5, 26.9}) ASSERT_EQ(one.bin_of(j, v), two.bin_of(j, v)) << j;
  }
  std::vector<float> row_one(features), row_two(features);
  std::vector<std::uint64_t> bits_one(1), bits_two(1);
  std::size_t ones = 0;
  for (std::uint64_t s = 1; s <= 200; ++s) {
    const std::size_t a = one.draw(3, s, x_bins, row_one, bits_one);
    ASSERT_EQ(two.draw(3, s, x_bins, row_two, bits_two), a) << s;
    ASSERT_EQ(row_two, row_one) << s;
    ASSERT_EQ(bits_two, bits_one) << s;
    ones += a;
  }
  EXPECT_GT(ones, 200U * features / 8);  // x's bins are drawn: the rows are not all zeros
}

}  // namespace
}  // namespace tfdebug::interpret::detail
