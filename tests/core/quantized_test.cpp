#include "tfdebug/core/quantized.hpp"

#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "tfdebug/core/dtype.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/stats.hpp"
#include "tfdebug/core/tensor.hpp"
#include "tfdebug/core/tensor_view.hpp"

namespace tfdebug {
namespace {

void put_u16(std::vector<std::byte>& b, std::size_t at, std::uint16_t v) {
  std::memcpy(b.data() + at, &v, 2);
}

constexpr std::uint16_t kHalf = 0x3800;  // f16 0.5
constexpr std::uint16_t kTwo = 0x4000;   // f16 2.0
constexpr std::uint16_t kMinusOne = 0xBC00;

std::vector<float> decode(BlockFormat f, const std::vector<std::byte>& b) {
  const auto& info = block_format_info(f);
  std::vector<float> out(b.size() / static_cast<std::size_t>(info.block_bytes) *
                         static_cast<std::size_t>(info.block_elements));
  dequantize(f, b.data(), static_cast<std::int64_t>(b.size()) / info.block_bytes, out.data());
  return out;
}

TEST(Quantized, FormatTable) {
  EXPECT_EQ(block_formats().size(), 8u);
  EXPECT_EQ(block_format_info(BlockFormat::q6_k).block_bytes, 210);
  EXPECT_EQ(parse_block_format("Q4_K"), BlockFormat::q4_k);
  EXPECT_FALSE(parse_block_format("q3_k").has_value());
}

TEST(Quantized, Q8_0IsScaleTimesInt8) {
  std::vector<std::byte> b(34);
  put_u16(b, 0, kHalf);
  for (int j = 0; j < 32; ++j)
    b[2 + static_cast<std::size_t>(j)] = static_cast<std::byte>(static_cast<std::int8_t>(j - 16));
  const auto y = decode(BlockFormat::q8_0, b);
  for (int j = 0; j < 32; ++j)
    EXPECT_EQ(y[static_cast<std::size_t>(j)], 0.5f * static_cast<float>(j - 16)) << j;
}

TEST(Quantized, Q4_0LowNibblesFirstThenHigh) {
  std::vector<std::byte> b(18);
  put_u16(b, 0, kTwo);
  for (int j = 0; j < 16; ++j)
    b[2 + static_cast<std::size_t>(j)] = static_cast<std::byte>(j | ((15 - j) << 4));
  const auto y = decode(BlockFormat::q4_0, b);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[static_cast<std::size_t>(j)], 2.0f * static_cast<float>(j - 8));
    EXPECT_EQ(y[static_cast<std::size_t>(j + 16)], 2.0f * static_cast<float>(15 - j - 8));
  }
}

TEST(Quantized, Q4_1AddsTheMinimum) {
  std::vector<std::byte> b(20);
  put_u16(b, 0, kHalf);
  put_u16(b, 2, kMinusOne);
  for (int j = 0; j < 16; ++j) b[4 + static_cast<std::size_t>(j)] = static_cast<std::byte>(0xF3);
  const auto y = decode(BlockFormat::q4_1, b);
  EXPECT_EQ(y[0], 0.5f * 3 - 1);
  EXPECT_EQ(y[16], 0.5f * 15 - 1);
}

TEST(Quantized, Q5FifthBitComesFromQh) {
  std::vector<std::byte> b(22);
  put_u16(b, 0, kTwo);
  const std::uint32_t qh = (1u << 3) | (1u << 20);  // value 3 and value 20 get bit 4
  std::memcpy(b.data() + 2, &qh, 4);
  for (int j = 0; j < 16; ++j)
    b[6 + static_cast<std::size_t>(j)] = static_cast<std::byte>(0x21);  // lo 1, hi 2
  const auto y = decode(BlockFormat::q5_0, b);
  EXPECT_EQ(y[0], 2.0f * (1 - 16));
  EXPECT_EQ(y[3], 2.0f * (1 + 16 - 16));
  EXPECT_EQ(y[16], 2.0f * (2 - 16));
  EXPECT_EQ(y[20], 2.0f * (2 + 16 - 16));

  std::vector<std::byte> c(24);
  put_u16(c, 0, kHalf);
  put_u16(c, 2, kMinusOne);
  std::memcpy(c.data() + 4, &qh, 4);
  for (int j = 0; j < 16; ++j) c[8 + static_cast<std::size_t>(j)] = static_cast<std::byte>(0x21);
  const auto z = decode(BlockFormat::q5_1, c);
  EXPECT_EQ(z[0], 0.5f * 1 - 1);
  EXPECT_EQ(z[3], 0.5f * 17 - 1);
  EXPECT_EQ(z[20], 0.5f * 18 - 1);
}

TEST(Quantized, Q4KSixBitScalesAndMins) {
  std::vector<std::byte> b(144);
  put_u16(b, 0, kHalf);  // d
  put_u16(b, 2, kTwo);   // dmin
  std::uint8_t s[12] = {};
  s[0] = 3;                 // pair 0 scale
  s[4] = 5;                 // pair 0 min
  s[1] = 7 | (1 << 6);      // pair 1 scale 7; top bits of pair 5's scale = 1
  s[5] = 2 | (2 << 6);      // pair 1 min 2; top bits of pair 5's min = 2
  s[9] = 0x4 | (0x6 << 4);  // pair 5: scale low 4 = 4, min low 4 = 6
  std::memcpy(b.data() + 4, s, 12);
  for (int i = 0; i < 128; ++i)
    b[16 + static_cast<std::size_t>(i)] = static_cast<std::byte>(0x9A);  // lo 10, hi 9
  const auto y = decode(BlockFormat::q4_k, b);
  EXPECT_EQ(y[0], 0.5f * 3 * 10 - 2.0f * 5);                 // group 0, low nibbles, pair 0
  EXPECT_EQ(y[32], 0.5f * 7 * 9 - 2.0f * 2);                 // group 0, high nibbles, pair 1
  EXPECT_EQ(y[160], 0.5f * (4 + 16) * 9 - 2.0f * (6 + 32));  // group 2, high nibbles, pair 5
  EXPECT_EQ(y[64], 0.0f);                                    // pair 2: scale 0, min 0
}

TEST(Quantized, Q5KHighBitsPerGroup) {
  std::vector<std::byte> b(176);
  put_u16(b, 0, kHalf);
  put_u16(b, 2, kTwo);
  std::uint8_t s[12] = {};
  for (int i = 0; i < 4; ++i) s[i] = 1;  // pairs 0-3: scale 1, min 0
  std::memcpy(b.data() + 4, s, 12);
  b[16 + 5] = static_cast<std::byte>(0b0000'0110);  // qh[5]: bit 1 (group 0, high) and bit 2 (group 1, low)
  for (int i = 0; i < 128; ++i)
    b[48 + static_cast<std::size_t>(i)] = static_cast<std::byte>(0x32);  // lo 2, hi 3
  const auto y = decode(BlockFormat::q5_k, b);
  EXPECT_EQ(y[5], 0.5f * 2);        // group 0, low: bit 0 clear
  EXPECT_EQ(y[32 + 5], 0.5f * 19);  // group 0, high: bit 1 set
  EXPECT_EQ(y[64 + 5], 0.5f * 18);  // group 1, low: bit 2 set
  EXPECT_EQ(y[96 + 5], 0.5f * 3);
  EXPECT_EQ(y[128], 0.0f);  // pair 4: scale 0
}

TEST(Quantized, Q6KLayout) {
  std::vector<std::byte> b(210);
  for (int i = 0; i < 128; ++i) b[static_cast<std::size_t>(i)] = static_cast<std::byte>(0x51);  // lo 1, hi 5
  for (int i = 0; i < 64; ++i)
    b[128 + static_cast<std::size_t>(i)] = static_cast<std::byte>(0b11100100);  // 0,1,2,3
  for (int i = 0; i < 16; ++i)
    b[192 + static_cast<std::size_t>(i)] = static_cast<std::byte>(static_cast<std::int8_t>(i - 8));
  put_u16(b, 208, kHalf);
  const auto y = decode(BlockFormat::q6_k, b);
  // value l: scale index l/16, q = (1 | 0<<4) - 32; value l+32: (1 | 1<<4) - 32, scale index 2 + l/16
  EXPECT_EQ(y[0], 0.5f * -8 * (1 - 32));
  EXPECT_EQ(y[17], 0.5f * -7 * (1 - 32));
  EXPECT_EQ(y[32], 0.5f * -6 * (17 - 32));
  EXPECT_EQ(y[64], 0.5f * -4 * (5 + 32 - 32));
  EXPECT_EQ(y[96], 0.5f * -2 * (5 + 48 - 32));
  EXPECT_EQ(y[128], 0.5f * 0 * (1 - 32));  // second half, scales 8..15
  EXPECT_EQ(y[255], 0.5f * 7 * (5 + 48 - 32));
}

// The streaming path (decode a chunk, run the f32 kernel) equals the kernel on the decoded whole.
TEST(Quantized, StatsMatchTheDecodedTensor) {
  std::mt19937 rng(7);
  for (const BlockFormatInfo& info : block_formats()) {
    const std::int64_t rows = 40;
    const std::int64_t cols = 1024;
    std::vector<std::byte> blocks(
        static_cast<std::size_t>(rows * cols / info.block_elements * info.block_bytes));
    for (auto& x : blocks) x = static_cast<std::byte>(rng());
    // Keep the f16 scales finite and moderate: every 2-byte field gets a small exponent.
    for (std::size_t at = 0; at < blocks.size(); at += static_cast<std::size_t>(info.block_bytes)) {
      const std::size_t d_at = info.format == BlockFormat::q6_k ? 208 : 0;
      put_u16(blocks, at + d_at, static_cast<std::uint16_t>(0x2000 | (rng() & 0x3FF)));
      if (info.format == BlockFormat::q4_1 || info.format == BlockFormat::q5_1 ||
          info.format == BlockFormat::q4_k || info.format == BlockFormat::q5_k)
        put_u16(blocks, at + 2, static_cast<std::uint16_t>(0x2000 | (rng() & 0x83FF)));
    }
    const QuantizedView q{info.format, blocks.data(), {rows, cols}};
    ASSERT_EQ(q.bytes(), blocks.size());
    const auto decoded = decode(info.format, blocks);
    const TensorView whole(decoded.data(), DType::f32, {rows, cols});
    StatsOptions options;
    options.threads = 3;
    const Stats a = compute_stats(q, options);
    const Stats b = compute_stats(whole, options);
    EXPECT_EQ(a.count, rows * cols) << info.name;
    EXPECT_EQ(a.zero, b.zero) << info.name;
    EXPECT_EQ(a.negative, b.negative) << info.name;
    EXPECT_EQ(a.min, b.min) << info.name;
    EXPECT_EQ(a.max, b.max) << info.name;
    EXPECT_EQ(a.mean, b.mean) << info.name;
    EXPECT_EQ(a.variance, b.variance) << info.name;
    EXPECT_GT(a.variance, 0) << info.name;
  }
}

TEST(StatsAccumulatorTest, PiecesAgreeWithTheWhole) {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(3.0f, 2.0f);
  std::vector<float> v(100000);
  for (auto& x : v) x = normal(rng);
  v[12345] = std::numeric_limits<float>::quiet_NaN();
  const TensorView whole(v.data(), DType::f32, {1000, 100});
  StatsOptions exact;
  exact.exact = true;  // f64 per element: different chunking changes only the last bits
  const Stats expect = compute_stats(whole, exact);
  StatsAccumulator first(DType::f32, exact);
  StatsAccumulator second(DType::f32, exact);
  first.add(whole.sliced(0, 0, 10));
  first.add(whole.sliced(0, 10, 613));
  second.add(whole.sliced(0, 613, 1000).transposed(0, 1).transposed(0, 1));
  first.merge_from(second);
  const Stats got = first.result();
  EXPECT_EQ(got.count, expect.count);
  EXPECT_EQ(got.nan, 1);
  EXPECT_EQ(got.min, expect.min);
  EXPECT_EQ(got.max, expect.max);
  EXPECT_NEAR(got.mean, expect.mean, 1e-12 * std::abs(expect.mean));
  EXPECT_NEAR(got.variance, expect.variance, 1e-12 * expect.variance);
  EXPECT_THROW(first.add(TensorView(v.data(), DType::f16, {10})), Error);
}

// f32 values in `dtype` (bf16 by truncation, f16 through the compiler's _Float16).
Tensor encoded(const std::vector<float>& v, DType dtype, std::int64_t rows, std::int64_t cols) {
  if (dtype == DType::f32 || dtype == DType::f64)
    return Tensor::copy_of(TensorView(v.data(), DType::f32, {rows, cols}), dtype);
  Tensor t(dtype, {rows, cols});
  auto* out = static_cast<std::uint16_t*>(t.data());
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (dtype == DType::bf16) {
      std::uint32_t bits;
      std::memcpy(&bits, &v[i], 4);
      out[i] = static_cast<std::uint16_t>(bits >> 16);
    } else {
      const _Float16 h = static_cast<_Float16>(v[i]);
      std::memcpy(&out[i], &h, 2);
    }
  }
  return t;
}

// row_summaries against a plain loop over the decoded values, for every float dtype, with
// NaN, Inf, -0 and subnormals, contiguous and strided.
TEST(RowSummaries, AgreeWithAPlainLoop) {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal;
  const std::int64_t rows = 13;
  const std::int64_t cols = 77;  // not a multiple of any vector length
  std::vector<float> v(static_cast<std::size_t>(rows * cols));
  for (auto& x : v) x = normal(rng);
  for (std::int64_t c = 0; c < cols; ++c)
    v[static_cast<std::size_t>(4 * cols + c)] = c % 2 ? 0.0f : -0.0f;  // dead row
  for (std::int64_t c = 0; c < cols; ++c)
    v[static_cast<std::size_t>(11 * cols + c)] = std::numeric_limits<float>::quiet_NaN();    // NaN row
  for (std::int64_t r = 0; r < rows; ++r) v[static_cast<std::size_t>(r * cols + 9)] = 0.0f;  // dead column
  v[static_cast<std::size_t>(2 * cols + 5)] = std::numeric_limits<float>::infinity();
  v[static_cast<std::size_t>(7 * cols + 76)] = std::numeric_limits<float>::quiet_NaN();
  v[static_cast<std::size_t>(8 * cols + 3)] = 1e-40f;  // subnormal
  for (const DType dtype : {DType::f32, DType::f64, DType::f16, DType::bf16}) {
    const Tensor t = encoded(v, dtype, rows, cols);
    for (const bool strided : {false, true}) {
      const Tensor tt = Tensor::copy_of(t.view().transposed(0, 1));  // cols x rows
      const TensorView m = strided ? tt.view().transposed(0, 1) : t.view();
      std::vector<double> abs_max(static_cast<std::size_t>(rows));
      std::vector<std::uint8_t> zero(static_cast<std::size_t>(rows));
      std::vector<std::uint8_t> nonzero(static_cast<std::size_t>(cols), 0);
      row_summaries(m, abs_max.data(), zero.data(), nonzero.data());
      for (std::int64_t r = 0; r < rows; ++r) {
        double expect = 0;
        bool all_zero = true;
        for (std::int64_t c = 0; c < cols; ++c) {
          const double x = t.view().at({r, c});
          if (std::isfinite(x)) expect = std::max(expect, std::fabs(x));
          all_zero = all_zero && x == 0;
        }
        EXPECT_EQ(abs_max[static_cast<std::size_t>(r)], expect) << dtype_name(dtype) << " row " << r;
        EXPECT_EQ(zero[static_cast<std::size_t>(r)], all_zero ? 1 : 0) << dtype_name(dtype) << " row " << r;
      }
      for (std::int64_t c = 0; c < cols; ++c) {
        bool any = false;
        for (std::int64_t r = 0; r < rows; ++r)
          any = any || t.view().at({r, c}) != 0 || std::isnan(t.view().at({r, c}));
        EXPECT_EQ(nonzero[static_cast<std::size_t>(c)], any ? 1 : 0) << dtype_name(dtype) << " column " << c;
      }
      EXPECT_EQ(zero[4], 1);
      EXPECT_EQ(zero[11], 0);  // NaN is not zero
      EXPECT_EQ(nonzero[9], 0);
    }
  }
  std::int32_t ints[4] = {};
  EXPECT_THROW(row_summaries(TensorView(ints, DType::i32, {2, 2}), nullptr, nullptr, nullptr), Error);
}

// column_nonzero against a plain loop, for every float dtype, on every SIMD target, with column
// counts around the vector widths (the four-vector blocks, single vectors and the scalar tail),
// -0, subnormals and NaN, contiguous and strided; calls accumulate.
TEST(ColumnNonzero, AgreesWithAPlainLoopOnEverySimdTarget) {
  for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
    SCOPED_TRACE(hwy::TargetName(target));
    hwy::SetSupportedTargetsForTest(target);
    std::mt19937 rng(17);
    std::uniform_int_distribution<int> kind(0, 9);
    for (const std::int64_t rows : {1, 3, 40}) {
      for (const std::int64_t cols : {1, 7, 8, 16, 31, 64, 65, 77, 130}) {
        std::vector<float> v(static_cast<std::size_t>(rows * cols));
        for (auto& x : v) {
          const int k = kind(rng);
          // mostly +-0 so that some columns stay dead
          x = k < 7    ? (k % 2 ? 0.0f : -0.0f)
              : k == 7 ? 1e-40f
              : k == 8 ? std::numeric_limits<float>::quiet_NaN()
                       : -2.5f;
        }
        for (std::int64_t r = 0; r < rows; ++r)
          v[static_cast<std::size_t>(r * cols)] = 0.0f;  // column 0 dead
        for (const DType dtype : {DType::f32, DType::f64, DType::f16, DType::bf16}) {
          const Tensor t = encoded(v, dtype, rows, cols);
          const Tensor tt = Tensor::copy_of(t.view().transposed(0, 1));
          for (const bool strided : {false, true}) {
            const TensorView m = strided ? tt.view().transposed(0, 1) : t.view();
            std::vector<std::uint8_t> nonzero(static_cast<std::size_t>(cols), 0);
            column_nonzero(m, nonzero.data());
            for (std::int64_t c = 0; c < cols; ++c) {
              bool any = false;
              for (std::int64_t r = 0; r < rows; ++r) {
                const double x = t.view().at({r, c});
                any = any || x != 0 || std::isnan(x);
              }
              ASSERT_EQ(nonzero[static_cast<std::size_t>(c)], any ? 1 : 0)
                  << dtype_name(dtype) << " " << rows << "x" << cols << " column " << c;
            }
            EXPECT_EQ(nonzero[0], 0);
            nonzero.assign(nonzero.size(), 1);
            column_nonzero(m, nonzero.data());  // set, never cleared
            EXPECT_EQ(nonzero[0], 1);
          }
        }
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
  std::int32_t ints[4] = {};
  EXPECT_THROW(column_nonzero(TensorView(ints, DType::i32, {2, 2}), nullptr), Error);
}

// compute_extremes, compute_range, compute_range_l2, compute_range_zeros and all_finite against a
// plain loop over the decoded values,
// for every float dtype and
// lengths around the vector widths, with -0, subnormals, and each kind of non-finite value in
// turn at every position class (first, body, tail).
void expect_extremes_agree_with_a_plain_loop();

TEST(Extremes, AgreeWithAPlainLoopOnEverySimdTarget) {
  for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
    SCOPED_TRACE(hwy::TargetName(target));
    hwy::SetSupportedTargetsForTest(target);
    expect_extremes_agree_with_a_plain_loop();
  }
  hwy::SetSupportedTargetsForTest(0);  // back to what the CPU supports
}

void expect_extremes_agree_with_a_plain_loop() {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.5f, 3.0f);
  for (const DType dtype : {DType::f32, DType::f64, DType::f16, DType::bf16}) {
    for (const std::int64_t n : {1, 7, 15, 16, 17, 31, 32, 33, 63, 64, 65, 129, 1000, 40000}) {
      std::vector<float> v(static_cast<std::size_t>(n));
      for (auto& x : v) x = normal(rng);
      // Mixed signs, then all >= 0 and all <= 0 (the f32/f64 kernels decode the range from
      // integer patterns differently in each case).
      for (const int signs : {0, 1, -1}) {
        for (const int variant : {0, 1, 2, 3, 4, 5, 6, 7}) {
          std::vector<float> w = v;
          if (signs != 0)
            for (auto& x : w) x = static_cast<float>(signs) * std::fabs(x);
          const std::size_t at = variant % 3 == 0 ? 0 : variant % 3 == 1 ? w.size() / 2 : w.size() - 1;
          if (variant == 1) w[at] = -0.0f;
          if (variant == 2) w[at] = 1e-40f;  // subnormal in f32 (0 in f16, bf16 keeps it)
          if (variant == 3) w[at] = std::numeric_limits<float>::quiet_NaN();
          if (variant == 4) w[at] = -std::numeric_limits<float>::infinity();
          if (variant == 5) w[at] = std::numeric_limits<float>::infinity();
          if (variant == 6) w[at] = -std::numeric_limits<float>::quiet_NaN();  // the sign bit set
          if (variant == 7) w[at] = 0.0f;
          const Tensor t = encoded(w, dtype, 1, n);
          const Extremes e = compute_extremes(t.view());
          bool nonfinite = false;
          bool zero = false;
          std::int64_t zeros = 0;
          double lo = std::numeric_limits<double>::infinity();
          double hi = -lo;
          for (std::int64_t i = 0; i < n; ++i) {
            const double x = t.view().at({0, i});
            nonfinite = nonfinite || !std::isfinite(x);
            zero = zero || x == 0;
            zeros += x == 0 ? 1 : 0;
            lo = std::min(lo, x);
            hi = std::max(hi, x);
          }
          const std::string where = std::string(dtype_name(dtype)) + " n=" + std::to_string(n) + " signs " +
                                    std::to_string(signs) + " variant " + std::to_string(variant);
          EXPECT_EQ(e.count, n) << where;
          EXPECT_EQ(e.nonfinite, nonfinite) << where;
          EXPECT_EQ(e.zero, zero) << where;
          EXPECT_EQ(all_finite(t.view()), !nonfinite) << where;
          const Extremes range = compute_range(t.view());
          EXPECT_EQ(range.count, n) << where;
          EXPECT_EQ(range.nonfinite, nonfinite) << where;
          EXPECT_FALSE(range.zero) << where;           // not measured
          EXPECT_TRUE(std::isnan(range.l2)) << where;  // not measured
          EXPECT_EQ(range.zeros, 0) << where;          // not measured
          const Extremes norm = compute_range_l2(t.view());
          EXPECT_EQ(norm.count, n) << where;
          EXPECT_EQ(norm.nonfinite, nonfinite) << where;
          const Extremes counted = compute_range_zeros(t.view());
          EXPECT_EQ(counted.count, n) << where;
          EXPECT_EQ(counted.nonfinite, nonfinite) << where;
          EXPECT_EQ(counted.zeros, zeros) << where;  // counted with NaN and Inf too
          EXPECT_EQ(counted.zero, zeros > 0) << where;
          if (nonfinite) {
            EXPECT_EQ(e.min, 0) << where;  // not measured
            EXPECT_EQ(range.min, 0) << where;
            EXPECT_EQ(counted.min, 0) << where;
            EXPECT_TRUE(std::isnan(norm.l2)) << where;
            continue;
          }
          double squares = 0;
          for (std::int64_t i = 0; i < n; ++i) squares += t.view().at({0, i}) * t.view().at({0, i});
          // f32, f64: f64 squares; f16, bf16: the full statistics' f32 block partials.
          const double tolerance = dtype == DType::f32 || dtype == DType::f64 ? 1e-12 : 1e-6;
          EXPECT_NEAR(norm.l2, std::sqrt(squares), tolerance * std::sqrt(squares)) << where;
          EXPECT_EQ(norm.min, lo) << where;
          EXPECT_EQ(norm.max, hi) << where;
          EXPECT_EQ(range.min, lo) << where;
          EXPECT_EQ(range.max, hi) << where;
          EXPECT_EQ(range.abs_max, std::max(std::fabs(lo), std::fabs(hi))) << where;
          EXPECT_EQ(counted.min, lo) << where;
          EXPECT_EQ(counted.max, hi) << where;
          EXPECT_EQ(counted.abs_max, std::max(std::fabs(lo), std::fabs(hi))) << where;
          EXPECT_EQ(e.min, lo) << where;
          EXPECT_EQ(e.max, hi) << where;
          EXPECT_EQ(e.abs_max, std::max(std::fabs(lo), std::fabs(hi))) << where;
          const Stats s = compute_stats(t.view());  // the same as the full statistics
          EXPECT_EQ(e.min, s.min) << where;
          EXPECT_EQ(e.max, s.max) << where;
          EXPECT_EQ(e.abs_max, s.abs_max) << where;
          EXPECT_EQ(e.zero, s.zero > 0) << where;
          EXPECT_EQ(counted.zeros, s.zero) << where;
        }
      }
    }
  }
  // Many zeros (a ReLU's output: about half +0, some -0; then every value +-0), counted.
  std::bernoulli_distribution coin(0.5);
  for (const DType dtype : {DType::f32, DType::f64, DType::f16, DType::bf16}) {
    for (const std::int64_t n : {1, 15, 16, 17, 64, 65, 1000, 40001}) {
      for (const bool all : {false, true}) {
        std::vector<float> w(static_cast<std::size_t>(n));
        for (auto& x : w) {
          const float y = all ? 0.0f : std::max(normal(rng), 0.0f);
          x = coin(rng) ? -y : y;
        }
        const Tensor t = encoded(w, dtype, 1, n);
        std::int64_t zeros = 0;
        for (std::int64_t i = 0; i < n; ++i) zeros += t.view().at({0, i}) == 0 ? 1 : 0;
        const std::string where =
            std::string(dtype_name(dtype)) + " n=" + std::to_string(n) + (all ? " all" : "");
        const Extremes counted = compute_range_zeros(t.view());
        EXPECT_EQ(counted.zeros, zeros) << where;
        EXPECT_EQ(counted.zeros, compute_stats(t.view()).zero) << where;
        if (all) {
          EXPECT_EQ(counted.zeros, n) << where;
        }
        EXPECT_EQ(counted.abs_max, compute_extremes(t.view()).abs_max) << where;
      }
    }
  }
  // Strided views and other dtypes go through compute_stats.
  const Tensor m = encoded({1, -2, 3, 0, 5, 6}, DType::f32, 2, 3);
  EXPECT_EQ(compute_range_zeros(m.view().transposed(0, 1)).zeros, 1);
  EXPECT_EQ(compute_range_zeros(m.view()).zeros, 1);
  EXPECT_EQ(compute_extremes(m.view().transposed(0, 1)).zeros, 0);  // not counted
  EXPECT_DOUBLE_EQ(compute_range_l2(m.view().transposed(0, 1)).l2, std::sqrt(75.0));
  EXPECT_EQ(compute_range_l2(m.view()).l2, std::sqrt(75.0));  // 1 + 4 + 9 + 0 + 25 + 36, exact
  // f32 values whose squares leave f32's range either way: the sum is over f64 squares.
  auto norm_of = [](std::initializer_list<float> values) {
    double squares = 0;
    for (const float x : values) squares += double(x) * double(x);
    return std::sqrt(squares);
  };
  const Tensor wide = encoded({3e20f, 4e20f, 1e-30f}, DType::f32, 1, 3);
  const double wide_norm = norm_of({3e20f, 4e20f, 1e-30f});
  EXPECT_NEAR(compute_range_l2(wide.view()).l2, wide_norm, 1e-12 * wide_norm);
  const Tensor tiny = encoded({3e-30f, 4e-30f}, DType::f32, 1, 2);
  const double tiny_norm = norm_of({3e-30f, 4e-30f});
  EXPECT_NEAR(compute_range_l2(tiny.view()).l2, tiny_norm, 1e-12 * tiny_norm);
  const Extremes strided = compute_extremes(m.view().transposed(0, 1));
  EXPECT_EQ(strided.min, -2);
  EXPECT_EQ(strided.max, 6);
  EXPECT_TRUE(strided.zero);
  std::int32_t ints[4] = {3, -9, 4, 1};
  const Extremes integers = compute_extremes(TensorView(ints, DType::i32, {4}));
  EXPECT_EQ(integers.min, -9);
  EXPECT_EQ(integers.abs_max, 9);
  EXPECT_FALSE(integers.zero);
  EXPECT_EQ(compute_extremes(TensorView(ints, DType::i32, {0})).count, 0);
}

}  // namespace
}  // namespace tfdebug
