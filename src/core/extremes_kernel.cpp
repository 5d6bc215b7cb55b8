// compute_extremes (stats.hpp): the one-pass "is anything wrong here" summary of a tensor, for the
// op outputs a live session checks every step: NaN/Inf, whether a value is +-0, and the range.
// f32 and f64 lanes are read as integers (BitsImpl: four integer min/max per vector give all of
// it); f16 and bf16 keep their magnitudes and order keys as 16-bit integers (Bits16Impl), so no
// lane converts. Against the stats kernel's classification counts and moments: several times
// its speed. compute_range leaves out the zero test (BitsImpl<false>: three min/max),
// compute_range_l2 adds the sum of squares in f64, compute_range_zeros a count of the +-0 values
// (what the per-step metrics report of a forward output), all_finite leaves out the range too
// (NonfiniteImpl: one operation per vector). Highway dispatches to the best SIMD target, as for
// the stats kernel.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "extremes_kernel.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

HWY_BEFORE_NAMESPACE();
namespace tfdebug::detail {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The smallest lane of two vectors into *low, the largest of two others into *high (each
// starting from what it holds).
template <class D, class V, typename T>
HWY_INLINE void ReduceMinMax(D d, V min0, V min1, V max0, V max1, T* low, T* high) {
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(d));
  HWY_ALIGN T values[hn::MaxLanes(d)];
  hn::Store(hn::Min(min0, min1), d, values);
  for (std::int64_t l = 0; l < lanes; ++l) *low = std::min(*low, values[l]);
  hn::Store(hn::Max(max0, max1), d, values);
  for (std::int64_t l = 0; l < lanes; ++l) *high = std::max(*high, values[l]);
}

// Keeps a loaded vector in a register. Without it GCC folds the load into each of the min/max
// that read it, and three 64-byte loads per vector bound the loop at Zen 4's one 512-bit load a
// cycle (compute_range: 65 GB/s in cache, against 107 with one load).
template <class V>
HWY_INLINE void InRegister(V& v) {
#if HWY_COMPILER_GCC_ACTUAL && HWY_ARCH_X86 && HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
  asm("" : "+x"(v.raw));
#else
  (void)v;
#endif
}

// Float lanes (f32, f64) read as integers. An IEEE bit pattern read as a signed integer orders
// like the value for values >= +0, and backwards for values <= -0 (a larger magnitude, a larger
// integer, from -0 at the smallest integer); read as unsigned, every negative pattern is above
// every positive one. So integer min/max give the range, NaN and Inf (finish_bits decodes them):
//   smax: the largest pattern, signed: when some value is >= +0, the largest value (+NaN above
//         +Inf above every finite value);
//   umax: the largest pattern, unsigned: when some value is <= -0, the smallest value (-NaN
//         above -Inf above every finite value);
//   smin: the smallest pattern, signed: the largest value when every value is negative, the
//         smallest when none is;
//   umin (kZero): the smallest pattern, unsigned: 0 exactly when a value is +0 (a -0 is the
//         smallest signed pattern, in smin).
// Three or four integer min/max per vector and no compare or mask (compute_range in cache:
// 107 GB/s, against 65 for float min/max and a NaN compare; compute_extremes: 103 against 42
// with magnitudes masked out besides). kSquares (compute_range_l2) also sums the squares in f64
// (f32 values widened first, so nothing squares to 0 or Inf that f64 holds) into *squares,
// meaningful only when every value is finite. out: [smax, smin, umax, umin] as unsigned patterns.
// kCount (compute_range_zeros) counts the values that are +-0 instead (a +-0 pattern shifted left
// by one is 0): a compare and a subtract per vector into per-lane counters, which blocks of
// kCountBlock values keep from wrapping; into *zeros.
template <bool kZero, bool kSquares, bool kCount, typename TF, typename TU>
HWY_INLINE void BitsImpl(const TF* HWY_RESTRICT data, std::int64_t n, TU* HWY_RESTRICT out,
                         double* HWY_RESTRICT squares, std::int64_t* HWY_RESTRICT zeros) {
  using TI = std::make_signed_t<TU>;
  const hn::ScalableTag<TF> df;
  const hn::RebindToSigned<decltype(df)> di;
  const hn::RebindToUnsigned<decltype(df)> du;
  const hn::Repartition<double, decltype(df)> dd;
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(df));
  // Integer min/max take one cycle: two accumulators of each kind keep the loop off their
  // latency, and all of them fit AVX2's 16 registers with the loaded vectors (four of each
  // spilled to the stack there). The f64 sums of squares (four-cycle FMAs) take four.
  auto smax0 = hn::Set(di, std::numeric_limits<TI>::min()), smax1 = smax0;
  auto smin0 = hn::Set(di, std::numeric_limits<TI>::max()), smin1 = smin0;
  auto umax0 = hn::Zero(du), umax1 = umax0;
  auto umin0 = hn::Set(du, std::numeric_limits<TU>::max()), umin1 = umin0;
  auto sq0 = hn::Zero(dd), sq1 = sq0, sq2 = sq0, sq3 = sq0;
  auto count0 = hn::Zero(du), count1 = count0;
  std::int64_t counted = 0;
  const auto flush_counts = [&] {
    HWY_ALIGN TU lane_counts[hn::MaxLanes(du)];
    hn::Store(hn::Add(count0, count1), du, lane_counts);
    for (std::int64_t l = 0; l < lanes; ++l) counted += static_cast<std::int64_t>(lane_counts[l]);
    count0 = hn::Zero(du);
    count1 = count0;
  };
  auto step = [&](auto x, auto& smax, auto& smin, auto& umax, auto& umin, auto& sq, auto& count) {
    InRegister(x);
    const auto s = hn::BitCast(di, x);
    const auto u = hn::BitCast(du, x);
    smax = hn::Max(smax, s);
    smin = hn::Min(smin, s);
    umax = hn::Max(umax, u);
    if constexpr (kZero) umin = hn::Min(umin, u);
    // A true lane is all ones: subtracting it adds 1.
    if constexpr (kCount)
      count = hn::Sub(count, hn::VecFromMask(du, hn::Eq(hn::ShiftLeft<1>(u), hn::Zero(du))));
    if constexpr (kSquares && sizeof(TF) == 8) {
      sq = hn::MulAdd(x, x, sq);
    } else if constexpr (kSquares) {
#if HWY_TARGET == HWY_SCALAR
      const auto w = hn::PromoteTo(dd, x);
      sq = hn::MulAdd(w, w, sq);
#else
      const hn::Half<decltype(df)> dh;
      const auto low = hn::PromoteTo(dd, hn::LowerHalf(dh, x));
      const auto high = hn::PromoteTo(dd, hn::UpperHalf(dh, x));
      sq = hn::MulAdd(high, high, hn::MulAdd(low, low, sq));
#endif
    }
  };
  std::int64_t i = 0;
  // A lane counts at most kCountBlock / lanes / 2 values of a block, far below TU's range.
  constexpr std::int64_t kCountBlock = std::int64_t{1} << 28;
  while (i + 4 * lanes <= n) {
    const std::int64_t end = kCount ? std::min(n, i + kCountBlock) : n;
    for (; i + 4 * lanes <= end; i += 4 * lanes) {
      step(hn::LoadU(df, data + i), smax0, smin0, umax0, umin0, sq0, count0);
      step(hn::LoadU(df, data + i + lanes), smax1, smin1, umax1, umin1, sq1, count1);
      step(hn::LoadU(df, data + i + 2 * lanes), smax0, smin0, umax0, umin0, sq2, count0);
      step(hn::LoadU(df, data + i + 3 * lanes), smax1, smin1, umax1, umin1, sq3, count1);
    }
    if constexpr (kCount) flush_counts();
  }
  for (; i + lanes <= n; i += lanes) step(hn::LoadU(df, data + i), smax0, smin0, umax0, umin0, sq0, count0);
  if constexpr (kCount) flush_counts();
  TI smax = std::numeric_limits<TI>::min();
  TI smin = std::numeric_limits<TI>::max();
  ReduceMinMax(di, smin0, smin1, smax0, smax1, &smin, &smax);
  TU umax = 0;
  TU umin = std::numeric_limits<TU>::max();
  ReduceMinMax(du, umin0, umin1, umax0, umax1, &umin, &umax);
  double sum = 0;
  if constexpr (kSquares)
    sum = hn::GetLane(hn::SumOfLanes(dd, hn::Add(hn::Add(sq0, sq1), hn::Add(sq2, sq3))));
  for (; i < n; ++i) {  // views may be misaligned: copy each value out
    TU u;
    std::memcpy(&u, data + i, sizeof(TU));
    const auto s = static_cast<TI>(u);
    smax = std::max(smax, s);
    smin = std::min(smin, s);
    umax = std::max(umax, u);
    umin = std::min(umin, u);
    if constexpr (kSquares) {
      TF x;
      std::memcpy(&x, data + i, sizeof(TF));
      sum += static_cast<double>(x) * static_cast<double>(x);
    }
    if constexpr (kCount) counted += static_cast<TU>(u << 1) == 0 ? 1 : 0;
  }
  out[0] = static_cast<TU>(smax);
  out[1] = static_cast<TU>(smin);
  out[2] = umax;
  out[3] = umin;
  if constexpr (kSquares) *squares = sum;
  if constexpr (kCount) *zeros = counted;
}

// all_finite (f32, f64): acc = x * 0 + acc stays exactly 0 for finite x and turns NaN (and stays
// NaN) at the first NaN or +-Inf: one fused operation per vector. Returns whether a value was
// NaN or Inf.
template <typename TF>
HWY_INLINE bool NonfiniteImpl(const TF* HWY_RESTRICT data, std::int64_t n) {
  const hn::ScalableTag<TF> df;
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(df));
  const auto zero = hn::Zero(df);
  auto acc0 = zero, acc1 = zero, acc2 = zero, acc3 = zero;
  std::int64_t i = 0;
  for (; i + 4 * lanes <= n; i += 4 * lanes) {
    acc0 = hn::MulAdd(hn::LoadU(df, data + i), zero, acc0);
    acc1 = hn::MulAdd(hn::LoadU(df, data + i + lanes), zero, acc1);
    acc2 = hn::MulAdd(hn::LoadU(df, data + i + 2 * lanes), zero, acc2);
    acc3 = hn::MulAdd(hn::LoadU(df, data + i + 3 * lanes), zero, acc3);
  }
  for (; i + lanes <= n; i += lanes) acc0 = hn::MulAdd(hn::LoadU(df, data + i), zero, acc0);
  const auto acc = hn::Add(hn::Add(acc0, acc1), hn::Add(acc2, acc3));
  bool nonfinite = !hn::AllTrue(df, hn::Eq(acc, zero));  // NaN compares unequal
  // Views may be misaligned: copy each value out.
  for (; i < n; ++i) {
    TF x;
    std::memcpy(&x, data + i, sizeof(TF));
    nonfinite = nonfinite || !std::isfinite(x);
  }
  return nonfinite;
}

// 16-bit floats (f16, bf16) as bit patterns. out: [largest |bits|, smallest |bits|, smallest key,
// largest key], where key(b) = b ^ ((b >> 15) & abs_mask) as a signed integer orders like the
// value (negative values flip their magnitude bits) and is its own inverse.
HWY_INLINE void Bits16Impl(const std::uint16_t* HWY_RESTRICT data, std::int64_t n, std::uint16_t abs_mask,
                           std::uint16_t* HWY_RESTRICT out) {
  const hn::ScalableTag<std::uint16_t> du;
  const hn::RebindToSigned<decltype(du)> di;
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(du));
  const auto mask = hn::Set(du, abs_mask);
  const auto imask = hn::BitCast(di, mask);
  auto amax = hn::Zero(du);
  auto amin = hn::Set(du, abs_mask);
  auto kmin = hn::Set(di, std::numeric_limits<std::int16_t>::max());
  auto kmax = hn::Set(di, std::numeric_limits<std::int16_t>::min());
  std::int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto b = hn::LoadU(du, data + i);
    const auto a = hn::And(b, mask);
    amax = hn::Max(amax, a);
    amin = hn::Min(amin, a);
    const auto s = hn::BitCast(di, b);
    const auto k = hn::Xor(s, hn::And(hn::ShiftRight<15>(s), imask));
    kmin = hn::Min(kmin, k);
    kmax = hn::Max(kmax, k);
  }
  HWY_ALIGN std::uint16_t bits[hn::MaxLanes(du)];
  HWY_ALIGN std::int16_t keys[hn::MaxLanes(di)];
  std::uint16_t largest = 0;
  std::uint16_t smallest = abs_mask;
  std::int16_t low = std::numeric_limits<std::int16_t>::max();
  std::int16_t high = std::numeric_limits<std::int16_t>::min();
  hn::Store(amax, du, bits);
  for (std::int64_t l = 0; l < lanes; ++l) largest = std::max(largest, bits[l]);
  hn::Store(amin, du, bits);
  for (std::int64_t l = 0; l < lanes; ++l) smallest = std::min(smallest, bits[l]);
  hn::Store(kmin, di, keys);
  for (std::int64_t l = 0; l < lanes; ++l) low = std::min(low, keys[l]);
  hn::Store(kmax, di, keys);
  for (std::int64_t l = 0; l < lanes; ++l) high = std::max(high, keys[l]);
  for (; i < n; ++i) {
    std::uint16_t b;
    std::memcpy(&b, data + i, sizeof b);  // views may be misaligned
    const auto a = static_cast<std::uint16_t>(b & abs_mask);
    largest = std::max(largest, a);
    smallest = std::min(smallest, a);
    const auto s = static_cast<std::int16_t>(b);
    const auto k = static_cast<std::int16_t>(s ^ ((s < 0 ? -1 : 0) & static_cast<std::int16_t>(abs_mask)));
    low = std::min(low, k);
    high = std::max(high, k);
  }
  out[0] = largest;
  out[1] = smallest;
  out[2] = static_cast<std::uint16_t>(low);
  out[3] = static_cast<std::uint16_t>(high);
}

void Extremes32(const float* data, std::int64_t n, std::uint32_t* out) {
  BitsImpl<true, false, false>(data, n, out, nullptr, nullptr);
}
void Extremes64(const double* data, std::int64_t n, std::uint64_t* out) {
  BitsImpl<true, false, false>(data, n, out, nullptr, nullptr);
}
void Extremes16(const std::uint16_t* data, std::int64_t n, std::uint16_t abs_mask, std::uint16_t* out) {
  Bits16Impl(data, n, abs_mask, out);
}
void Range32(const float* data, std::int64_t n, std::uint32_t* out) {
  BitsImpl<false, false, false>(data, n, out, nullptr, nullptr);
}
void Range64(const double* data, std::int64_t n, std::uint64_t* out) {
  BitsImpl<false, false, false>(data, n, out, nullptr, nullptr);
}
void RangeSquares32(const float* data, std::int64_t n, std::uint32_t* out, double* squares) {
  BitsImpl<false, true, false>(data, n, out, squares, nullptr);
}
void RangeSquares64(const double* data, std::int64_t n, std::uint64_t* out, double* squares) {
  BitsImpl<false, true, false>(data, n, out, squares, nullptr);
}
void RangeZeros32(const float* data, std::int64_t n, std::uint32_t* out, std::int64_t* zeros) {
  BitsImpl<false, false, true>(data, n, out, nullptr, zeros);
}
void RangeZeros64(const double* data, std::int64_t n, std::uint64_t* out, std::int64_t* zeros) {
  BitsImpl<false, false, true>(data, n, out, nullptr, zeros);
}
bool Nonfinite32(const float* data, std::int64_t n) {
  return NonfiniteImpl(data, n);
}
bool Nonfinite64(const double* data, std::int64_t n) {
  return NonfiniteImpl(data, n);
}

}  // namespace HWY_NAMESPACE
}  // namespace tfdebug::detail
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "tfdebug/core/dtype.hpp"
#include "tfdebug/core/stats.hpp"

namespace tfdebug {
namespace detail {
HWY_EXPORT(Extremes32);
HWY_EXPORT(Extremes64);
HWY_EXPORT(Extremes16);
HWY_EXPORT(Range32);
HWY_EXPORT(Range64);
HWY_EXPORT(RangeSquares32);
HWY_EXPORT(RangeSquares64);
HWY_EXPORT(RangeZeros32);
HWY_EXPORT(RangeZeros64);
HWY_EXPORT(Nonfinite32);
HWY_EXPORT(Nonfinite64);
}  // namespace detail

namespace {

// From the full statistics: strided views, fp8 and integer dtypes (and f16, bf16 when the zeros
// are counted).
Extremes from_stats(const TensorView& view, bool count_zeros = false) {
  const Stats s = compute_stats(view);
  Extremes e;
  e.count = s.count;
  e.nonfinite = s.nonfinite() > 0;
  e.zero = s.zero > 0;
  if (count_zeros) e.zeros = s.zero;
  if (!e.nonfinite) {
    e.min = s.min;
    e.max = s.max;
    e.abs_max = s.abs_max;
  }
  return e;
}

// What the bit patterns say; the range only when every value is finite.
Extremes finish(std::int64_t count, bool nonfinite, bool zero, double low, double high) {
  Extremes e;
  e.count = count;
  e.nonfinite = nonfinite;
  e.zero = zero;
  if (!nonfinite) {
    e.min = low;
    e.max = high;
    e.abs_max = std::max(std::fabs(low), std::fabs(high));
  }
  return e;
}

// Decodes BitsImpl's [smax, smin, umax, umin] patterns of f32 (TU = uint32) or f64 (uint64)
// values; zero only when umin was measured.
template <typename TF, typename TU>
Extremes finish_bits(std::int64_t count, const TU (&bits)[4], bool zero_measured) {
  constexpr TU sign = TU{1} << (8 * sizeof(TU) - 1);
  constexpr TU inf = std::bit_cast<TU>(std::numeric_limits<TF>::infinity());
  const TU smax = bits[0];
  const TU smin = bits[1];
  const TU umax = bits[2];
  const TU umin = bits[3];
  const bool positive = (smax & sign) == 0;  // some value is >= +0: smax is the largest
  const bool negative = (umax & sign) != 0;  // some value is <= -0: umax is the smallest
  const bool nonfinite = (positive && smax >= inf) || (negative && umax >= (sign | inf));
  const bool zero = zero_measured && (umin == 0 || smin == sign);
  return finish(count, nonfinite, zero, std::bit_cast<TF>(negative ? umax : smin),
                std::bit_cast<TF>(positive ? smax : smin));
}

}  // namespace

Extremes compute_extremes(TensorView view) {
  const std::int64_t n = view.numel();
  if (n == 0) return Extremes{};
  if (!view.is_contiguous()) return from_stats(view);
  switch (view.dtype()) {
    case DType::f32: {
      std::uint32_t bits[4];
      HWY_DYNAMIC_DISPATCH(detail::Extremes32)(static_cast<const float*>(view.data()), n, bits);
      return finish_bits<float>(n, bits, true);
    }
    case DType::f64: {
      std::uint64_t bits[4];
      HWY_DYNAMIC_DISPATCH(detail::Extremes64)(static_cast<const double*>(view.data()), n, bits);
      return finish_bits<double>(n, bits, true);
    }
    case DType::f16:
    case DType::bf16: {
      const bool half = view.dtype() == DType::f16;
      std::uint16_t out[4];
      HWY_DYNAMIC_DISPATCH(detail::Extremes16)
      (static_cast<const std::uint16_t*>(view.data()), n, 0x7FFF, out);
      auto decode = [&](std::uint16_t key) {
        const auto s = static_cast<std::int16_t>(key);
        const auto b = static_cast<std::uint16_t>(s ^ ((s < 0 ? -1 : 0) & 0x7FFF));
        return static_cast<double>(half ? f16_to_f32(b) : bf16_to_f32(b));
      };
      return finish(n, out[0] >= (half ? 0x7C00 : 0x7F80), out[1] == 0, decode(out[2]), decode(out[3]));
    }
    default:
      return from_stats(view);
  }
}

Extremes compute_range(TensorView view) {
  const std::int64_t n = view.numel();
  if (n == 0) return Extremes{};
  if (view.is_contiguous() && view.dtype() == DType::f32) {
    std::uint32_t bits[4];
    HWY_DYNAMIC_DISPATCH(detail::Range32)(static_cast<const float*>(view.data()), n, bits);
    return finish_bits<float>(n, bits, false);
  }
  if (view.is_contiguous() && view.dtype() == DType::f64) {
    std::uint64_t bits[4];
    HWY_DYNAMIC_DISPATCH(detail::Range64)(static_cast<const double*>(view.data()), n, bits);
    return finish_bits<double>(n, bits, false);
  }
  Extremes e = compute_extremes(view);
  e.zero = false;  // not measured
  return e;
}

Extremes compute_range_zeros(TensorView view) {
  const std::int64_t n = view.numel();
  if (n == 0) return Extremes{};
  std::int64_t zeros = 0;
  if (view.is_contiguous() && view.dtype() == DType::f32) {
    std::uint32_t bits[4];
    HWY_DYNAMIC_DISPATCH(detail::RangeZeros32)(static_cast<const float*>(view.data()), n, bits, &zeros);
    Extremes e = finish_bits<float>(n, bits, false);
    e.zeros = zeros;
    e.zero = zeros > 0;
    return e;
  }
  if (view.is_contiguous() && view.dtype() == DType::f64) {
    std::uint64_t bits[4];
    HWY_DYNAMIC_DISPATCH(detail::RangeZeros64)(static_cast<const double*>(view.data()), n, bits, &zeros);
    Extremes e = finish_bits<double>(n, bits, false);
    e.zeros = zeros;
    e.zero = zeros > 0;
    return e;
  }
  return from_stats(view, true);  // strided views and the other dtypes
}

Extremes compute_range_l2(TensorView view) {
  const std::int64_t n = view.numel();
  if (n == 0) {
    Extremes e;
    e.l2 = 0;
    return e;
  }
  double squares = 0;
  if (view.is_contiguous() && view.dtype() == DType::f32) {
    std::uint32_t bits[4];
    HWY_DYNAMIC_DISPATCH(detail::RangeSquares32)(static_cast<const float*>(view.data()), n, bits, &squares);
    Extremes e = finish_bits<float>(n, bits, false);
    if (!e.nonfinite) e.l2 = std::sqrt(squares);
    return e;
  }
  if (view.is_contiguous() && view.dtype() == DType::f64) {
    std::uint64_t bits[4];
    HWY_DYNAMIC_DISPATCH(detail::RangeSquares64)(static_cast<const double*>(view.data()), n, bits, &squares);
    Extremes e = finish_bits<double>(n, bits, false);
    if (e.nonfinite) return e;
    // Squares beyond f64's range (values above ~1e154, or non-zero values below ~1e-146, whose
    // squares lose bits or vanish): the full statistics' norm, which scales them.
    const bool in_range = std::isfinite(squares) && (e.abs_max == 0 || squares >= 0x1p-970);
    e.l2 = in_range ? std::sqrt(squares) : compute_stats(view).l2;
    return e;
  }
  // Strided views and the other dtypes: from the full statistics.
  const Stats s = compute_stats(view);
  Extremes e;
  e.count = s.count;
  e.nonfinite = s.nonfinite() > 0;
  if (!e.nonfinite) {
    e.min = s.min;
    e.max = s.max;
    e.abs_max = s.abs_max;
    e.l2 = s.l2;
  }
  return e;
}

bool all_finite(TensorView view) {
  const std::int64_t n = view.numel();
  if (n > 0 && view.is_contiguous() && view.dtype() == DType::f32)
    return !HWY_DYNAMIC_DISPATCH(detail::Nonfinite32)(static_cast<const float*>(view.data()), n);
  if (n > 0 && view.is_contiguous() && view.dtype() == DType::f64)
    return !HWY_DYNAMIC_DISPATCH(detail::Nonfinite64)(static_cast<const double*>(view.data()), n);
  return !compute_extremes(view).nonfinite;
}

}  // namespace tfdebug
#endif  // HWY_ONCE
