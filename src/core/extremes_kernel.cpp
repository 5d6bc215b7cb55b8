// compute_extremes (stats.hpp): the one-pass "is anything wrong here" summary of a tensor, for the
// op outputs a live session checks every step. Per vector it keeps the largest and smallest
// |x| as integers (IEEE magnitudes order like integers once the sign bit is masked; the largest
// at or above the infinity pattern means a NaN or Inf, the smallest at 0 means a zero) and the
// smallest and largest value (float lanes for f32 and f64; for f16 and bf16, the bit patterns
// turned into integers that order like the values, so no lane converts). Six to nine simple
// operations per vector against the stats kernel's classification counts and moments: several
// times its speed. compute_range leaves out the zero test (RangeImpl: min, max and a NaN
// mask), compute_range_l2 adds the sum of squares in f64 (RangeImpl<true>), all_finite the range too
// (NonfiniteImpl: one operation per vector). Highway dispatches to the best SIMD target, as for the stats
// kernel.
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

HWY_BEFORE_NAMESPACE();
namespace tfdebug::detail {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The smallest lane of four vectors into *low, the largest of four others into *high (each
// starting from what it holds).
template <class D, class V, typename T>
HWY_INLINE void ReduceMinMax(D d, V min0, V min1, V min2, V min3, V max0, V max1, V max2, V max3, T* low,
                             T* high) {
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(d));
  HWY_ALIGN T values[hn::MaxLanes(d)];
  hn::Store(hn::Min(hn::Min(min0, min1), hn::Min(min2, min3)), d, values);
  for (std::int64_t l = 0; l < lanes; ++l) *low = std::min(*low, values[l]);
  hn::Store(hn::Max(hn::Max(max0, max1), hn::Max(max2, max3)), d, values);
  for (std::int64_t l = 0; l < lanes; ++l) *high = std::max(*high, values[l]);
}

// Float lanes (f32, f64). out: [largest |bits|, smallest |bits|]; lo/hi: the smallest and largest
// value (meaningful only when no lane was NaN).
template <typename TF, typename TU>
HWY_INLINE void FloatImpl(const TF* HWY_RESTRICT data, std::int64_t n, TU abs_mask, TU* HWY_RESTRICT out,
                          TF* HWY_RESTRICT lo, TF* HWY_RESTRICT hi) {
  const hn::ScalableTag<TF> df;
  const hn::RebindToUnsigned<decltype(df)> du;
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(df));
  const auto mask = hn::Set(du, abs_mask);
  // Four independent accumulators of each kind: float min/max take several cycles each, and
  // one chain of them would bound the loop (16,384 f32 in cache: 64 GB/s, against 42 with two).
  auto amax0 = hn::Zero(du), amax1 = amax0, amax2 = amax0, amax3 = amax0;
  auto amin0 = hn::Set(du, abs_mask), amin1 = amin0, amin2 = amin0, amin3 = amin0;
  auto vmin0 = hn::Set(df, std::numeric_limits<TF>::infinity()), vmin1 = vmin0, vmin2 = vmin0, vmin3 = vmin0;
  auto vmax0 = hn::Set(df, -std::numeric_limits<TF>::infinity()), vmax1 = vmax0, vmax2 = vmax0, vmax3 = vmax0;
  std::int64_t i = 0;
  auto step = [&](auto x, auto& amax, auto& amin, auto& vmin, auto& vmax) {
    const auto a = hn::And(hn::BitCast(du, x), mask);
    amax = hn::Max(amax, a);
    amin = hn::Min(amin, a);
    vmin = hn::Min(vmin, x);
    vmax = hn::Max(vmax, x);
  };
  for (; i + 4 * lanes <= n; i += 4 * lanes) {
    step(hn::LoadU(df, data + i), amax0, amin0, vmin0, vmax0);
    step(hn::LoadU(df, data + i + lanes), amax1, amin1, vmin1, vmax1);
    step(hn::LoadU(df, data + i + 2 * lanes), amax2, amin2, vmin2, vmax2);
    step(hn::LoadU(df, data + i + 3 * lanes), amax3, amin3, vmin3, vmax3);
  }
  for (; i + lanes <= n; i += lanes) step(hn::LoadU(df, data + i), amax0, amin0, vmin0, vmax0);
  TU largest = 0;
  TU smallest = abs_mask;
  ReduceMinMax(du, amin0, amin1, amin2, amin3, amax0, amax1, amax2, amax3, &smallest, &largest);
  TF low = std::numeric_limits<TF>::infinity();
  TF high = -low;
  ReduceMinMax(df, vmin0, vmin1, vmin2, vmin3, vmax0, vmax1, vmax2, vmax3, &low, &high);
  for (; i < n; ++i) {  // views may be misaligned: copy each value out
    TU b;
    TF x;
    std::memcpy(&b, data + i, sizeof(TU));
    std::memcpy(&x, data + i, sizeof(TF));
    const TU a = static_cast<TU>(b & abs_mask);
    largest = std::max(largest, a);
    smallest = std::min(smallest, a);
    low = std::min(low, x);
    high = std::max(high, x);
  }
  out[0] = largest;
  out[1] = smallest;
  *lo = low;
  *hi = high;
}

// compute_range (f32, f64): no zero test, so no integer magnitudes: the smallest and largest
// value (float min/max; +-Inf shows in them) and a mask of NaN lanes (x != x), ORed (a compare
// chained through its write mask would wait for the last one). kSquares (compute_range_l2): also
// the sum of squares in f64 (f32 values widened first, so nothing squares to 0 or Inf that f64
// holds) into *squares. Returns whether a value was NaN or Inf; lo/hi/squares are meaningful only
// when none was.
template <bool kSquares, typename TF>
HWY_INLINE bool RangeImpl(const TF* HWY_RESTRICT data, std::int64_t n, TF* HWY_RESTRICT lo,
                          TF* HWY_RESTRICT hi, double* HWY_RESTRICT squares) {
  const hn::ScalableTag<TF> df;
  const hn::Repartition<double, decltype(df)> dd;
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(df));
  auto nan0 = hn::FirstN(df, 0), nan1 = nan0, nan2 = nan0, nan3 = nan0;
  auto vmin0 = hn::Set(df, std::numeric_limits<TF>::infinity()), vmin1 = vmin0, vmin2 = vmin0, vmin3 = vmin0;
  auto vmax0 = hn::Set(df, -std::numeric_limits<TF>::infinity()), vmax1 = vmax0, vmax2 = vmax0, vmax3 = vmax0;
  auto sq0 = hn::Zero(dd), sq1 = sq0, sq2 = sq0, sq3 = sq0;
  auto step = [&](auto x, auto& nan, auto& vmin, auto& vmax, auto& sq) {
    nan = hn::Or(nan, hn::Not(hn::Eq(x, x)));
    vmin = hn::Min(vmin, x);
    vmax = hn::Max(vmax, x);
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
  for (; i + 4 * lanes <= n; i += 4 * lanes) {
    step(hn::LoadU(df, data + i), nan0, vmin0, vmax0, sq0);
    step(hn::LoadU(df, data + i + lanes), nan1, vmin1, vmax1, sq1);
    step(hn::LoadU(df, data + i + 2 * lanes), nan2, vmin2, vmax2, sq2);
    step(hn::LoadU(df, data + i + 3 * lanes), nan3, vmin3, vmax3, sq3);
  }
  for (; i + lanes <= n; i += lanes) step(hn::LoadU(df, data + i), nan0, vmin0, vmax0, sq0);
  bool nan = !hn::AllFalse(df, hn::Or(hn::Or(nan0, nan1), hn::Or(nan2, nan3)));
  TF low = std::numeric_limits<TF>::infinity();
  TF high = -low;
  ReduceMinMax(df, vmin0, vmin1, vmin2, vmin3, vmax0, vmax1, vmax2, vmax3, &low, &high);
  double sum = 0;
  if constexpr (kSquares)
    sum = hn::GetLane(hn::SumOfLanes(dd, hn::Add(hn::Add(sq0, sq1), hn::Add(sq2, sq3))));
  for (; i < n; ++i) {  // views may be misaligned: copy each value out
    TF x;
    std::memcpy(&x, data + i, sizeof(TF));
    nan = nan || std::isnan(x);
    low = std::min(low, x);
    high = std::max(high, x);
    if constexpr (kSquares) sum += static_cast<double>(x) * static_cast<double>(x);
  }
  *lo = low;
  *hi = high;
  if constexpr (kSquares) *squares = sum;
  return nan || std::isinf(low) || std::isinf(high);
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

void Extremes32(const float* data, std::int64_t n, std::uint32_t* out, float* lo, float* hi) {
  FloatImpl<float, std::uint32_t>(data, n, 0x7FFFFFFFu, out, lo, hi);
}
void Extremes64(const double* data, std::int64_t n, std::uint64_t* out, double* lo, double* hi) {
  FloatImpl<double, std::uint64_t>(data, n, 0x7FFFFFFFFFFFFFFFull, out, lo, hi);
}
void Extremes16(const std::uint16_t* data, std::int64_t n, std::uint16_t abs_mask, std::uint16_t* out) {
  Bits16Impl(data, n, abs_mask, out);
}
bool Range32(const float* data, std::int64_t n, float* lo, float* hi) {
  return RangeImpl<false>(data, n, lo, hi, nullptr);
}
bool Range64(const double* data, std::int64_t n, double* lo, double* hi) {
  return RangeImpl<false>(data, n, lo, hi, nullptr);
}
bool RangeSquares32(const float* data, std::int64_t n, float* lo, float* hi, double* squares) {
  return RangeImpl<true>(data, n, lo, hi, squares);
}
bool RangeSquares64(const double* data, std::int64_t n, double* lo, double* hi, double* squares) {
  return RangeImpl<true>(data, n, lo, hi, squares);
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
HWY_EXPORT(Nonfinite32);
HWY_EXPORT(Nonfinite64);
}  // namespace detail

namespace {

// From the full statistics: strided views, fp8 and integer dtypes.
Extremes from_stats(const TensorView& view) {
  const Stats s = compute_stats(view);
  Extremes e;
  e.count = s.count;
  e.nonfinite = s.nonfinite() > 0;
  e.zero = s.zero > 0;
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

}  // namespace

Extremes compute_extremes(TensorView view) {
  const std::int64_t n = view.numel();
  if (n == 0) return Extremes{};
  if (!view.is_contiguous()) return from_stats(view);
  switch (view.dtype()) {
    case DType::f32: {
      std::uint32_t bits[2];
      float lo = 0;
      float hi = 0;
      HWY_DYNAMIC_DISPATCH(detail::Extremes32)(static_cast<const float*>(view.data()), n, bits, &lo, &hi);
      return finish(n, bits[0] >= 0x7F800000u, bits[1] == 0, lo, hi);
    }
    case DType::f64: {
      std::uint64_t bits[2];
      double lo = 0;
      double hi = 0;
      HWY_DYNAMIC_DISPATCH(detail::Extremes64)(static_cast<const double*>(view.data()), n, bits, &lo, &hi);
      return finish(n, bits[0] >= 0x7FF0000000000000ull, bits[1] == 0, lo, hi);
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
    float lo = 0;
    float hi = 0;
    const bool nonfinite =
        HWY_DYNAMIC_DISPATCH(detail::Range32)(static_cast<const float*>(view.data()), n, &lo, &hi);
    return finish(n, nonfinite, false, lo, hi);
  }
  if (view.is_contiguous() && view.dtype() == DType::f64) {
    double lo = 0;
    double hi = 0;
    const bool nonfinite =
        HWY_DYNAMIC_DISPATCH(detail::Range64)(static_cast<const double*>(view.data()), n, &lo, &hi);
    return finish(n, nonfinite, false, lo, hi);
  }
  Extremes e = compute_extremes(view);
  e.zero = false;  // not measured
  return e;
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
    float lo = 0;
    float hi = 0;
    const bool nonfinite = HWY_DYNAMIC_DISPATCH(detail::RangeSquares32)(
        static_cast<const float*>(view.data()), n, &lo, &hi, &squares);
    Extremes e = finish(n, nonfinite, false, lo, hi);
    if (!nonfinite) e.l2 = std::sqrt(squares);
    return e;
  }
  if (view.is_contiguous() && view.dtype() == DType::f64) {
    double lo = 0;
    double hi = 0;
    const bool nonfinite = HWY_DYNAMIC_DISPATCH(detail::RangeSquares64)(
        static_cast<const double*>(view.data()), n, &lo, &hi, &squares);
    Extremes e = finish(n, nonfinite, false, lo, hi);
    if (nonfinite) return e;
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
