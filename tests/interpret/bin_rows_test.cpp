// Tabular LIME's row draws (src/interpret/bin_rows.hpp): every copy of the loop this CPU runs
// (baseline, x86-64-v3, x86-64-v4) draws the same values and bits, and the tails of Phi are
// handed back to be inverted exactly.
#include "bin_rows.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "lime_bins.hpp"

namespace tfdebug::interpret::detail {
namespace {

struct Arrays {
  std::array<std::vector<std::uint64_t>, 3> threshold;
  std::array<std::vector<float>, 4> cdf_low, cdf_width, mean, stdev, min, max;
  std::vector<std::int32_t> x_bins;
  BinArrays view() const {
    BinArrays a{};
    for (int k = 0; k < 4; ++k) {
      if (k < 3) a.threshold[k] = threshold[k].data();
      a.cdf_low[k] = cdf_low[k].data();
      a.cdf_width[k] = cdf_width[k].data();
      a.mean[k] = mean[k].data();
      a.stdev[k] = stdev[k].data();
      a.min[k] = min[k].data();
      a.max[k] = max[k].data();
    }
    a.x_bins = x_bins.data();
    return a;
  }
};

// 70 features (a block of 64 and one of 6), four bins each; bin 3 spans Phi's whole range, so
// its draws reach the tails; bin 2's [min, max] is narrower than its normal's central range,
// so the clamp is reached.
Arrays make_arrays() {
  Arrays a;
  const std::size_t m = 70;
  for (std::size_t k = 0; k < 3; ++k)
    for (std::size_t j = 0; j < m; ++j) a.threshold[k].push_back((std::uint64_t{1} << 30) * (k + 1));
  for (std::size_t k = 0; k < 4; ++k) {
    for (std::size_t j = 0; j < m; ++j) {
      const auto jj = static_cast<float>(j), kk = static_cast<float>(k);
      const float mean = jj + 10 * kk, sd = 0.5f + 0.1f * kk;
      a.cdf_low[k].push_back(k == 3 ? 1e-6f : 0.1f + 0.01f * kk);
      a.cdf_width[k].push_back(k == 3 ? 1 - 2e-6f : 0.5f);
      a.mean[k].push_back(mean);
      a.stdev[k].push_back(sd);
      a.min[k].push_back(k == 3 ? mean - 5 * sd : mean - (k == 2 ? 0.5f : 1.2f) * sd);
      a.max[k].push_back(k == 3 ? mean + 5 * sd : mean + (k == 2 ? 0.5f : 1.5f) * sd);
    }
  }
  for (std::size_t j = 0; j < m; ++j) a.x_bins.push_back(static_cast<std::int32_t>(j % 4));
  return a;
}

// 200 samples (blocks of 64 lanes; the last block's spare lanes repeat its last sample), both
// feature blocks; values row-major.
struct Draw {
  std::vector<float> values;
  std::vector<std::uint64_t> ones, outer;  // per sample, per feature: the bit
};

Draw draw_rows(BinColumns columns, const BinArrays& a) {
  Draw d;
  d.values.resize(200 * 70);
  d.ones.resize(200 * 70);
  d.outer.resize(200 * 70);
  std::vector<float> values(64 * 64);
  std::uint64_t starts[64], ones[64], outer[64];
  for (std::size_t block = 0; block < 200; block += 64) {
    const std::size_t n = block + 64 <= 200 ? 64 : 200 - block;
    for (std::size_t i = 0; i < 64; ++i) starts[i] = 0x1234567ULL * (block + (i < n ? i : n - 1) + 1);
    for (std::size_t begin = 0; begin < 70; begin += 64) {
      const std::size_t end = begin + 64 < 70 ? begin + 64 : 70;
      columns(a, starts, begin, end, values.data(), ones, outer);
      for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = begin; j < end; ++j) {
          const std::size_t at = (block + i) * 70 + j;
          d.values[at] = values[(j - begin) * 64 + i];
          d.ones[at] = (ones[j - begin] >> i) & 1;
          d.outer[at] = (outer[j - begin] >> i) & 1;
        }
      }
    }
  }
  return d;
}

TEST(BinRows, EveryCopyOfTheLoopDrawsTheSameRows) {
  const Arrays arrays = make_arrays();
  const BinArrays a = arrays.view();
  const Draw baseline = draw_rows(bin_columns_baseline, a);
  // The bits: x's bin is drawn about a quarter of the time; the tails of bin 3 about 2 x 2.4%.
  std::size_t ones = 0, outer = 0;
  for (const std::uint64_t b : baseline.ones) ones += b;
  for (const std::uint64_t b : baseline.outer) outer += b;
  EXPECT_GT(ones, 200U * 70 / 4 * 8 / 10);
  EXPECT_LT(ones, 200U * 70 / 4 * 12 / 10);
  EXPECT_GT(outer, 0U);
  EXPECT_LT(outer, 200U * 70 / 4 * 2 * 5 / 100);
  // Outside the tails, every value lies in some bin's [min, max], and the clamp is reached.
  std::size_t checked = 0, clamped = 0;
  for (std::size_t r = 0; r < 200; ++r) {
    for (std::size_t j = 0; j < 70; ++j) {
      if (baseline.outer[r * 70 + j] != 0) continue;
      const float v = baseline.values[r * 70 + j];
      bool inside = false;
      for (std::size_t k = 0; k < 4; ++k) {
        inside = inside || (v >= arrays.min[k][j] && v <= arrays.max[k][j]);
        clamped += static_cast<std::size_t>(v == arrays.min[k][j] || v == arrays.max[k][j]);
      }
      ASSERT_TRUE(inside) << r << " " << j << " " << v;
      ++checked;
    }
  }
  EXPECT_GT(checked, 13000U);
  EXPECT_GT(clamped, 200U);  // bin 2: about a quarter of its draws, beyond its +-0.5 sd
#if TFDEBUG_BIN_ROWS_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2")) {
    const Draw v3 = draw_rows(bin_columns_x86_64_v3, a);
    EXPECT_EQ(v3.values, baseline.values);
    EXPECT_EQ(v3.ones, baseline.ones);
    EXPECT_EQ(v3.outer, baseline.outer);
  }
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl")) {
    const Draw v4 = draw_rows(bin_columns_x86_64_v4, a);
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
  std::vector<float> rows_one(200 * features), rows_two(200 * features);
  std::vector<std::uint64_t> bits_one(200), bits_two(200);
  one.draw(3, 1, 200, x_bins, rows_one, bits_one);
  two.draw(3, 1, 200, x_bins, rows_two, bits_two);
  EXPECT_EQ(rows_two, rows_one);
  EXPECT_EQ(bits_two, bits_one);
  std::size_t ones = 0;
  for (const std::uint64_t b : bits_one) ones += static_cast<std::size_t>(__builtin_popcountll(b));
  EXPECT_GT(ones, 200U * features / 8);  // x's bins are drawn: the rows are not all zeros
}

TEST(BinRows, ASampleIsTheSameInAnyBlockAndItsValueIsInTheBinItsBitSays) {
  // 130 features (two blocks of 64 and one of 2) of skewed data, whose outer bins reach Phi's
  // tails; samples 1..300 drawn at once and in pieces that cut the 64-sample blocks anywhere.
  constexpr std::size_t rows = 250, features = 130, words = 3, samples = 300;
  std::vector<float> training(rows * features);
  for (std::size_t i = 0; i < training.size(); ++i) {
    const double u = static_cast<double>((i * 2654435761U) % 9973) / 9973.0;
    training[i] = static_cast<float>(u * u * u * 40 - 3);
  }
  const QuartileBins bins(training, rows, features);
  std::vector<std::int32_t> x_bins(features);
  for (std::size_t j = 0; j < features; ++j) x_bins[j] = static_cast<std::int32_t>(j % 4);
  std::vector<float> all(samples * features), pieces(samples * features);
  std::vector<std::uint64_t> all_bits(samples * words), piece_bits(samples * words);
  bins.draw(11, 1, samples, x_bins, all, all_bits);
  for (const auto& [from, to] :
       std::vector<std::pair<std::size_t, std::size_t>>{{0, 1}, {1, 70}, {70, 131}, {131, 300}})
    bins.draw(11, 1 + from, to - from, x_bins, std::span<float>(pieces).subspan(from * features),
              std::span<std::uint64_t>(piece_bits).subspan(from * words));
  EXPECT_EQ(pieces, all);
  EXPECT_EQ(piece_bits, all_bits);
  // Each value lies in a bin (the clamp to the bin's training [min, max] keeps it there, the
  // tails' exact inversion too), and that bin is x's exactly where the bit is set.
  std::size_t ones = 0;
  for (std::size_t s = 0; s < samples; ++s) {
    for (std::size_t j = 0; j < features; ++j) {
      const bool bit = ((all_bits[s * words + j / 64] >> (j % 64)) & 1) != 0;
      ASSERT_EQ(bins.bin_of(j, all[s * features + j]) == x_bins[j], bit) << s << " " << j;
      ones += static_cast<std::size_t>(bit);
    }
    for (std::size_t j = features; j < words * 64; ++j)
      ASSERT_EQ((all_bits[s * words + j / 64] >> (j % 64)) & 1, 0U) << s << " " << j;
  }
  EXPECT_GT(ones, samples * features / 4 * 8 / 10);
  EXPECT_LT(ones, samples * features / 4 * 12 / 10);
}

}  // namespace
}  // namespace tfdebug::interpret::detail
