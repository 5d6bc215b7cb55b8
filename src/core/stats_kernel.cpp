// The fused statistics kernel, compiled once per SIMD target by Highway's foreach_target.
// The driver (stats.cpp) hands it contiguous chunks of at most kStatsChunk elements.
//
// Note [Fast and careful passes]: most chunks of real tensors hold only finite, normal values
// inside the target dtype's range. The fast pass computes only what such a chunk needs and
// tracks, for free, whether the assumption held: the largest |x| as integer bits (NaN and Inf
// have the largest bit patterns) and the smallest non-zero |x| (subnormals and target
// underflow sit at the bottom). When it did not hold, the chunk is recomputed by the careful
// pass, which classifies every lane and masks non-finite values out of every sum, min and max.
// The chunk is in L1/L2 by then, so the rerun is cheap, and only chunks that need it pay.
//
// Note [Narrow dtypes in f32 lanes]: f16, bf16, fp8 and the small integers are widened to f32
// (exactly), f64, i32 and i64 to f64. Sums are always accumulated in f64.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "stats_kernel.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

#include "stats_kernel.hpp"

HWY_BEFORE_NAMESPACE();
namespace tfdebug::detail {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// ---- Loaders: N input elements -> one vector of the compute type ---------------------------

// f16 bits (in u32 lanes) to f32. Highway's emulation for targets without F16C turns f16
// Inf/NaN into finite values, so targets below AVX2 use this exact integer version
// (Note [f16 to f32] in dtype.cpp).
template <class DF, class VU>
HWY_INLINE hn::Vec<DF> F16BitsToF32(DF df, VU bits) {
  const hn::RebindToUnsigned<DF> du;
  const hn::RebindToSigned<DF> di;
  const auto sign = hn::ShiftLeft<16>(hn::And(bits, hn::Set(du, 0x8000u)));
  const auto magnitude = hn::And(bits, hn::Set(du, 0x7FFFu));
  auto normal = hn::Add(hn::ShiftLeft<13>(magnitude), hn::Set(du, 0x38000000u));
  const auto inf_nan = hn::Gt(magnitude, hn::Set(du, 0x7BFFu));
  normal = hn::IfThenElse(inf_nan, hn::Or(normal, hn::Set(du, 0x7F800000u)), normal);
  const auto subnormal =
      hn::BitCast(du, hn::Mul(hn::ConvertTo(df, hn::BitCast(di, magnitude)), hn::Set(df, 0x1p-24f)));
  const auto is_sub = hn::Lt(magnitude, hn::Set(du, 0x0400u));
  return hn::BitCast(df, hn::Or(sign, hn::IfThenElse(is_sub, subnormal, normal)));
}

template <class DF>
HWY_INLINE hn::Vec<DF> LoadF16(DF df, const std::uint8_t* p) {
#if HWY_TARGET <= HWY_AVX2
  const hn::Rebind<hwy::float16_t, DF> dh;
  return hn::PromoteTo(df, hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(p)));
#else
  const hn::RebindToUnsigned<DF> du;
  const hn::Rebind<std::uint16_t, DF> du16;
  return F16BitsToF32(df, hn::PromoteTo(du, hn::LoadU(du16, reinterpret_cast<const std::uint16_t*>(p))));
#endif
}

// f16 bits already widened to u16 lanes.
template <class DF, class V16>
HWY_INLINE hn::Vec<DF> F16LanesToF32(DF df, V16 bits16) {
#if HWY_TARGET <= HWY_AVX2
  const hn::Rebind<hwy::float16_t, DF> dh;
  return hn::PromoteTo(df, hn::BitCast(dh, bits16));
#else
  const hn::RebindToUnsigned<DF> du;
  return F16BitsToF32(df, hn::PromoteTo(du, bits16));
#endif
}

template <class DF>
HWY_INLINE hn::Vec<DF> LoadBF16(DF df, const std::uint8_t* p) {
  const hn::RebindToUnsigned<DF> du;
  const hn::Rebind<std::uint16_t, DF> du16;
  const auto bits = hn::PromoteTo(du, hn::LoadU(du16, reinterpret_cast<const std::uint16_t*>(p)));
  return hn::BitCast(df, hn::ShiftLeft<16>(bits));
}

// Note [fp8 through f16] in dtype.cpp.
template <class DF>
HWY_INLINE hn::Vec<DF> LoadE5M2(DF df, const std::uint8_t* p) {
  const hn::Rebind<std::uint8_t, DF> du8;
  const hn::Rebind<std::uint16_t, DF> du16;
  const auto bits16 = hn::ShiftLeft<8>(hn::PromoteTo(du16, hn::LoadU(du8, p)));
  return F16LanesToF32(df, bits16);
}

template <class DF>
HWY_INLINE hn::Vec<DF> LoadE4M3FN(DF df, const std::uint8_t* p) {
  const hn::Rebind<std::uint8_t, DF> du8;
  const hn::Rebind<std::uint16_t, DF> du16;
  const auto b = hn::PromoteTo(du16, hn::LoadU(du8, p));
  const auto bits16 = hn::Or(hn::ShiftLeft<8>(hn::And(b, hn::Set(du16, 0x80))),
                             hn::ShiftLeft<7>(hn::And(b, hn::Set(du16, 0x7F))));
  const auto value = hn::Mul(F16LanesToF32(df, bits16), hn::Set(df, 256.0f));
  // S.1111.111 is the only NaN; as f16 it decodes to +-480, a magnitude no finite e4m3fn has.
  const auto is_nan = hn::Eq(hn::Abs(value), hn::Set(df, 480.0f));
  return hn::IfThenElse(is_nan, hn::Set(df, std::numeric_limits<float>::quiet_NaN()), value);
}

template <class DF, typename TInt>
HWY_INLINE hn::Vec<DF> LoadSmallInt(DF df, const std::uint8_t* p) {
  const hn::Rebind<TInt, DF> dn;
  const hn::Rebind<std::int32_t, DF> di32;
  return hn::ConvertTo(df, hn::PromoteTo(di32, hn::LoadU(dn, reinterpret_cast<const TInt*>(p))));
}

template <class DF>
HWY_INLINE hn::Vec<DF> LoadBool(DF df, const std::uint8_t* p) {
  return hn::Min(LoadSmallInt<DF, std::uint8_t>(df, p), hn::Set(df, 1.0f));
}

template <class DD>
HWY_INLINE hn::Vec<DD> LoadI32(DD dd, const std::uint8_t* p) {
  const hn::Rebind<std::int32_t, DD> di32;
  return hn::PromoteTo(dd, hn::LoadU(di32, reinterpret_cast<const std::int32_t*>(p)));
}

template <class DD>
HWY_INLINE hn::Vec<DD> LoadI64(DD dd, const std::uint8_t* p) {
  const hn::Rebind<std::int64_t, DD> di64;
  return hn::ConvertTo(dd, hn::LoadU(di64, reinterpret_cast<const std::int64_t*>(p)));
}

// ---- Accumulators -------------------------------------------------------------------------

template <class D>
struct Acc {
  using T = hn::TFromD<D>;
  using DI = hn::RebindToSigned<D>;
  using DU = hn::RebindToUnsigned<D>;
  using DD = hn::Repartition<double, D>;
  hn::Vec<D> min, max;
  hn::Vec<DI> abs_max_bits;    // |x| as integer bits (fast pass) / finite |x| (careful)
  hn::Vec<DU> min_abs_m1;      // (bits of non-zero |x|) - 1, unsigned; zero wraps to max
  hn::Vec<DI> zero, negative;  // counts are subtracted mask vectors (-1 per hit)
  hn::Vec<DI> nan, pos_inf, neg_inf, subnormal, t_over, t_under, t_sub;
  hn::Vec<DD> s1a, s1b, s2a, s2b, sabsa, sabsb;

  explicit Acc(D d) {
    const DI di;
    const DU du;
    const DD dd;
    min = hn::Set(d, std::numeric_limits<T>::infinity());
    max = hn::Set(d, -std::numeric_limits<T>::infinity());
    abs_max_bits = hn::Zero(di);
    min_abs_m1 = hn::Set(du, hwy::LimitsMax<hn::TFromD<DU>>());
    zero = negative = nan = pos_inf = neg_inf = subnormal = t_over = t_under = t_sub = hn::Zero(di);
    s1a = s1b = s2a = s2b = sabsa = sabsb = hn::Zero(dd);
  }
};

// Note [Shifted moments]: the deviation x - K is formed in f64. For f32-lane inputs it is exact
// (after widening); for f64 inputs it is one rounding. stats.cpp explains the choice of K.
template <class D>
HWY_INLINE void AddMomentsShifted(D d, Acc<D>& acc, hn::Vec<D> v, hn::Vec<D> magnitude, double shift) {
  using DD = hn::Repartition<double, D>;
  const DD dd;
  const auto k = hn::Set(dd, shift);
  if constexpr (sizeof(hn::TFromD<D>) == 8) {
    (void)d;
    const auto deviation = hn::Sub(v, k);
    acc.s1a = hn::Add(acc.s1a, deviation);
    acc.s2a = hn::MulAdd(deviation, deviation, acc.s2a);
    acc.sabsa = hn::Add(acc.sabsa, magnitude);
  } else {
#if HWY_TARGET == HWY_SCALAR
    (void)d;
    const auto wide = hn::Sub(hn::PromoteTo(dd, v), k);
    acc.s1a = hn::Add(acc.s1a, wide);
    acc.s2a = hn::MulAdd(wide, wide, acc.s2a);
    acc.sabsa = hn::Add(acc.sabsa, hn::PromoteTo(dd, magnitude));
#else
    const hn::Half<D> dh;
    const auto lo = hn::Sub(hn::PromoteTo(dd, hn::LowerHalf(dh, v)), k);
    const auto hi = hn::Sub(hn::PromoteTo(dd, hn::UpperHalf(dh, v)), k);
    acc.s1a = hn::Add(acc.s1a, lo);
    acc.s1b = hn::Add(acc.s1b, hi);
    acc.s2a = hn::MulAdd(lo, lo, acc.s2a);
    acc.s2b = hn::MulAdd(hi, hi, acc.s2b);
    acc.sabsa = hn::Add(acc.sabsa, hn::PromoteTo(dd, hn::LowerHalf(dh, magnitude)));
    acc.sabsb = hn::Add(acc.sabsb, hn::PromoteTo(dd, hn::UpperHalf(dh, magnitude)));
#endif
  }
}

template <class D>
HWY_INLINE void FastStep(D d, Acc<D>& acc, hn::Vec<D> v, double shift) {
  const hn::RebindToSigned<D> di;
  const hn::RebindToUnsigned<D> du;
  const auto magnitude = hn::Abs(v);
  acc.min = hn::Min(acc.min, v);
  acc.max = hn::Max(acc.max, v);
  acc.abs_max_bits = hn::Max(acc.abs_max_bits, hn::BitCast(di, magnitude));
  acc.min_abs_m1 = hn::Min(acc.min_abs_m1, hn::Sub(hn::BitCast(du, magnitude), hn::Set(du, 1)));
  acc.zero = hn::Sub(acc.zero, hn::BitCast(di, hn::VecFromMask(d, hn::Eq(v, hn::Zero(d)))));
  acc.negative = hn::Sub(acc.negative, hn::BitCast(di, hn::VecFromMask(d, hn::Lt(v, hn::Zero(d)))));
  AddMomentsShifted(d, acc, v, magnitude, shift);
}

struct CarefulLimits {
  double subnormal_below;
  bool want_target;
  double target_max, target_flush, target_min_normal;
};

template <bool kTail, class D>
HWY_INLINE void CarefulStep(D d, Acc<D>& acc, hn::Vec<D> v, double shift, const CarefulLimits& limits,
                            hn::Mask<D> valid) {
  using T = hn::TFromD<D>;
  const hn::RebindToSigned<D> di;
  const auto inf = hn::Set(d, std::numeric_limits<T>::infinity());
  const auto zero = hn::Zero(d);
  auto restrict_to_valid = [&](hn::Mask<D> m) {
    if constexpr (kTail) {
      return hn::And(m, valid);
    } else {
      return m;
    }
  };
  auto count = [&](auto& counter, hn::Mask<D> m) {
    counter = hn::Sub(counter, hn::BitCast(di, hn::VecFromMask(d, restrict_to_valid(m))));
  };
  (void)valid;
  const auto magnitude = hn::Abs(v);
  const auto finite = restrict_to_valid(hn::Lt(magnitude, inf));
  const auto nonzero = hn::And(finite, hn::Ne(v, zero));
  // IsNaN, not Ne(v, v): Highway 1.0.3's AVX-512 Ne is an ordered compare, false for NaN.
  count(acc.nan, hn::IsNaN(v));
  count(acc.pos_inf, hn::Eq(v, inf));
  count(acc.neg_inf, hn::Eq(v, hn::Neg(inf)));
  count(acc.zero, hn::Eq(v, zero));
  count(acc.negative, hn::And(finite, hn::Lt(v, zero)));
  count(acc.subnormal,
        hn::And(nonzero, hn::Lt(magnitude, hn::Set(d, static_cast<T>(limits.subnormal_below)))));
  if (limits.want_target) {
    // Limits are compared in the compute type; each limit is exactly representable in it.
    count(acc.t_over, hn::And(finite, hn::Gt(magnitude, hn::Set(d, static_cast<T>(limits.target_max)))));
    count(acc.t_under, hn::And(nonzero, hn::Le(magnitude, hn::Set(d, static_cast<T>(limits.target_flush)))));
    count(acc.t_sub,
          hn::And(nonzero, hn::Lt(magnitude, hn::Set(d, static_cast<T>(limits.target_min_normal)))));
  }
  acc.min = hn::Min(acc.min, hn::IfThenElse(finite, v, inf));
  acc.max = hn::Max(acc.max, hn::IfThenElse(finite, v, hn::Neg(inf)));
  const auto finite_magnitude = hn::IfThenElseZero(finite, magnitude);
  acc.abs_max_bits = hn::Max(acc.abs_max_bits, hn::BitCast(di, finite_magnitude));
  const hn::RebindToUnsigned<D> du;
  acc.min_abs_m1 = hn::Min(acc.min_abs_m1,
                           hn::Sub(hn::BitCast(du, hn::IfThenElse(nonzero, magnitude, inf)), hn::Set(du, 1)));
  const auto kept = hn::IfThenElse(finite, v, hn::Set(d, static_cast<T>(shift)));
  AddMomentsShifted(d, acc, kept, finite_magnitude, shift);
}

template <class D>
HWY_INLINE void MergeInto(Acc<D>& a, const Acc<D>& b) {
  a.min = hn::Min(a.min, b.min);
  a.max = hn::Max(a.max, b.max);
  a.abs_max_bits = hn::Max(a.abs_max_bits, b.abs_max_bits);
  a.min_abs_m1 = hn::Min(a.min_abs_m1, b.min_abs_m1);
  a.zero = hn::Add(a.zero, b.zero);
  a.negative = hn::Add(a.negative, b.negative);
  a.nan = hn::Add(a.nan, b.nan);
  a.pos_inf = hn::Add(a.pos_inf, b.pos_inf);
  a.neg_inf = hn::Add(a.neg_inf, b.neg_inf);
  a.subnormal = hn::Add(a.subnormal, b.subnormal);
  a.t_over = hn::Add(a.t_over, b.t_over);
  a.t_under = hn::Add(a.t_under, b.t_under);
  a.t_sub = hn::Add(a.t_sub, b.t_sub);
  a.s1a = hn::Add(a.s1a, b.s1a);
  a.s1b = hn::Add(a.s1b, b.s1b);
  a.s2a = hn::Add(a.s2a, b.s2a);
  a.s2b = hn::Add(a.s2b, b.s2b);
  a.sabsa = hn::Add(a.sabsa, b.sabsa);
  a.sabsb = hn::Add(a.sabsb, b.sabsb);
}

template <class D, class V>
HWY_INLINE std::int64_t SumCount(D d, V v) {
  HWY_ALIGN hn::TFromD<D> lanes[hn::MaxLanes(d)];
  hn::Store(v, d, lanes);
  std::int64_t total = 0;
  for (size_t i = 0; i < hn::Lanes(d); ++i) total += static_cast<std::int64_t>(lanes[i]);
  return total;
}

template <class D>
HWY_INLINE double SumLanes(D d, hn::Vec<D> v) {
  HWY_ALIGN double lanes[hn::MaxLanes(d)];
  hn::Store(v, d, lanes);
  double total = 0;
  for (size_t i = 0; i < hn::Lanes(d); ++i) total += lanes[i];
  return total;
}

template <class D>
void Finish(D d, const Acc<D>& acc, ChunkSums* out) {
  using T = hn::TFromD<D>;
  const hn::RebindToSigned<D> di;
  const hn::RebindToUnsigned<D> du;
  const hn::Repartition<double, D> dd;
  HWY_ALIGN T lanes[hn::MaxLanes(d)];
  out->min = std::numeric_limits<double>::infinity();
  out->max = -std::numeric_limits<double>::infinity();
  hn::Store(acc.min, d, lanes);
  for (size_t i = 0; i < hn::Lanes(d); ++i) out->min = std::min<double>(out->min, lanes[i]);
  hn::Store(acc.max, d, lanes);
  for (size_t i = 0; i < hn::Lanes(d); ++i) out->max = std::max<double>(out->max, lanes[i]);
  HWY_ALIGN hn::TFromD<decltype(di)> ints[hn::MaxLanes(di)];
  hn::Store(acc.abs_max_bits, di, ints);
  hn::TFromD<decltype(di)> abs_max_bits = 0;
  for (size_t i = 0; i < hn::Lanes(di); ++i) abs_max_bits = std::max(abs_max_bits, ints[i]);
  T abs_max;
  std::memcpy(&abs_max, &abs_max_bits, sizeof(T));
  out->abs_max = abs_max;
  HWY_ALIGN hn::TFromD<decltype(du)> uints[hn::MaxLanes(du)];
  hn::Store(acc.min_abs_m1, du, uints);
  hn::TFromD<decltype(du)> min_abs_m1 = hwy::LimitsMax<hn::TFromD<decltype(du)>>();
  for (size_t i = 0; i < hn::Lanes(du); ++i) min_abs_m1 = std::min(min_abs_m1, uints[i]);
  const auto min_abs_bits = static_cast<hn::TFromD<decltype(du)>>(min_abs_m1 + 1);
  T min_abs;
  std::memcpy(&min_abs, &min_abs_bits, sizeof(T));
  // All lanes zero (bits 0 - 1 wrapped) or only non-finite (bits of Inf) mean "none".
  out->min_abs_nonzero = (min_abs_bits == 0 || !(min_abs < std::numeric_limits<T>::infinity()))
                             ? std::numeric_limits<double>::infinity()
                             : static_cast<double>(min_abs);
  out->zero = SumCount(di, acc.zero);
  out->negative = SumCount(di, acc.negative);
  out->nan = SumCount(di, acc.nan);
  out->pos_inf = SumCount(di, acc.pos_inf);
  out->neg_inf = SumCount(di, acc.neg_inf);
  out->subnormal = SumCount(di, acc.subnormal);
  out->target_overflow = SumCount(di, acc.t_over);
  out->target_underflow = SumCount(di, acc.t_under);
  out->target_subnormal = SumCount(di, acc.t_sub);
  out->s1 = SumLanes(dd, acc.s1a) + SumLanes(dd, acc.s1b);
  out->s2 = SumLanes(dd, acc.s2a) + SumLanes(dd, acc.s2b);
  out->sabs = SumLanes(dd, acc.sabsa) + SumLanes(dd, acc.sabsb);
}

template <class D, class Loader>
void RunChunk(D d, const std::uint8_t* p, std::int64_t n, std::size_t elem_size, const KernelParams& params,
              Loader load, ChunkSums* out) {
  using T = hn::TFromD<D>;
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(d));
  const std::int64_t body = n - n % lanes;
  const CarefulLimits limits{params.subnormal_below, params.want_target, params.target_max,
                             params.target_flush, params.target_min_normal};
  const double shift = params.shift;
  const auto all = hn::FirstN(d, static_cast<size_t>(lanes));

  Acc<D> acc(d);
  bool careful = false;
  {
    Acc<D> other(d);
    std::int64_t i = 0;
    for (; i + 2 * lanes <= body; i += 2 * lanes) {
      FastStep(d, acc, load(d, p + i * elem_size), shift);
      FastStep(d, other, load(d, p + (i + lanes) * elem_size), shift);
    }
    if (i < body) FastStep(d, acc, load(d, p + i * elem_size), shift);
    MergeInto(acc, other);
    ChunkSums probe;
    Finish(d, acc, &probe);
    const double inf = std::numeric_limits<double>::infinity();
    careful = !(probe.abs_max < inf) || probe.min_abs_nonzero < params.subnormal_below ||
              (params.want_target &&
               (probe.abs_max > params.target_max || probe.min_abs_nonzero < params.target_min_normal));
    // abs_max is read from bits, so a NaN shows up as NaN here: !(NaN < inf) is true.
  }
  if (careful) {
    acc = Acc<D>(d);
    for (std::int64_t i = 0; i < body; i += lanes) {
      CarefulStep<false>(d, acc, load(d, p + i * elem_size), shift, limits, all);
    }
  }
  if (body < n) {
    // Tail: copy into a zeroed buffer so whole-vector loads stay in bounds; mask the padding.
    HWY_ALIGN std::uint8_t buffer[hn::MaxLanes(d) * 8] = {};
    std::memcpy(buffer, p + body * elem_size, static_cast<std::size_t>(n - body) * elem_size);
    CarefulStep<true>(d, acc, load(d, buffer), shift, limits, hn::FirstN(d, static_cast<size_t>(n - body)));
  }
  Finish(d, acc, out);
  out->count = n;
  (void)sizeof(T);
}

void ChunkKernel(const void* data, std::int64_t n, DType dtype, const KernelParams& params, ChunkSums* out) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  const hn::ScalableTag<float> df;
  const hn::ScalableTag<double> dd;
  const std::size_t size = dtype_size(dtype);
  switch (dtype) {
    case DType::f64:
      return RunChunk(
          dd, p, n, size, params,
          [](auto d, const std::uint8_t* q) { return hn::LoadU(d, reinterpret_cast<const double*>(q)); },
          out);
    case DType::f32:
      return RunChunk(
          df, p, n, size, params,
          [](auto d, const std::uint8_t* q) { return hn::LoadU(d, reinterpret_cast<const float*>(q)); }, out);
    case DType::f16:
      return RunChunk(
          df, p, n, size, params, [](auto d, const std::uint8_t* q) { return LoadF16(d, q); }, out);
    case DType::bf16:
      return RunChunk(
          df, p, n, size, params, [](auto d, const std::uint8_t* q) { return LoadBF16(d, q); }, out);
    case DType::f8_e4m3fn:
      return RunChunk(
          df, p, n, size, params, [](auto d, const std::uint8_t* q) { return LoadE4M3FN(d, q); }, out);
    case DType::f8_e5m2:
      return RunChunk(
          df, p, n, size, params, [](auto d, const std::uint8_t* q) { return LoadE5M2(d, q); }, out);
    case DType::i8:
      return RunChunk(
          df, p, n, size, params,
          [](auto d, const std::uint8_t* q) { return LoadSmallInt<decltype(d), std::int8_t>(d, q); }, out);
    case DType::u8:
      return RunChunk(
          df, p, n, size, params,
          [](auto d, const std::uint8_t* q) { return LoadSmallInt<decltype(d), std::uint8_t>(d, q); }, out);
    case DType::i16:
      return RunChunk(
          df, p, n, size, params,
          [](auto d, const std::uint8_t* q) { return LoadSmallInt<decltype(d), std::int16_t>(d, q); }, out);
    case DType::boolean:
      return RunChunk(
          df, p, n, size, params, [](auto d, const std::uint8_t* q) { return LoadBool(d, q); }, out);
    case DType::i32:
      return RunChunk(
          dd, p, n, size, params, [](auto d, const std::uint8_t* q) { return LoadI32(d, q); }, out);
    case DType::i64:
      return RunChunk(
          dd, p, n, size, params, [](auto d, const std::uint8_t* q) { return LoadI64(d, q); }, out);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace tfdebug::detail
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tfdebug::detail {

std::vector<KernelTarget> supported_kernels() {
  static const KernelTarget kCompiled[] = {
#if HWY_TARGETS & HWY_AVX3_DL
    {HWY_AVX3_DL, "AVX3_DL", &N_AVX3_DL::ChunkKernel},
#endif
#if HWY_TARGETS & HWY_AVX3
    {HWY_AVX3, "AVX3", &N_AVX3::ChunkKernel},
#endif
#if HWY_TARGETS & HWY_AVX2
    {HWY_AVX2, "AVX2", &N_AVX2::ChunkKernel},
#endif
#if HWY_TARGETS & HWY_SSE4
    {HWY_SSE4, "SSE4", &N_SSE4::ChunkKernel},
#endif
#if HWY_TARGETS & HWY_SSSE3
    {HWY_SSSE3, "SSSE3", &N_SSSE3::ChunkKernel},
#endif
#if HWY_TARGETS & HWY_EMU128
    {HWY_EMU128, "EMU128", &N_EMU128::ChunkKernel},
#endif
#if HWY_TARGETS & HWY_SCALAR
    {HWY_SCALAR, "SCALAR", &N_SCALAR::ChunkKernel},
#endif
  };
  const std::int64_t supported = hwy::SupportedTargets();
  std::vector<KernelTarget> out;
  for (const KernelTarget& k : kCompiled) {
    if ((supported & k.hwy_target) != 0) out.push_back(k);
  }
  return out;
}

}  // namespace tfdebug::detail
#endif  // HWY_ONCE
