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
#include <hwy/cache_control.h>
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cmath>
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

// bf16 is the top half of f32: one full-width load holds two vectors' worth, the even
// elements in the low halves of the u32 lanes and the odd ones in the high halves.
struct BF16Loader {
  template <class DF>
  HWY_INLINE hn::Vec<DF> operator()(DF df, const std::uint8_t* p) const {
    return LoadBF16(df, p);
  }
  template <class DF>
  HWY_INLINE void Pair(DF df, const std::uint8_t* p, hn::Vec<DF>& even, hn::Vec<DF>& odd) const {
    const hn::RebindToUnsigned<DF> du;
    const auto bits = hn::LoadU(du, reinterpret_cast<const std::uint32_t*>(p));
    even = hn::BitCast(df, hn::ShiftLeft<16>(bits));
    odd = hn::BitCast(df, hn::And(bits, hn::Set(du, 0xFFFF0000u)));
  }
};

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
//
// Note [Block partials]: deviations x - K, their squares and |x| are summed per lane in the
// compute type for kBlockVectors vectors, then widened and added into f64 chunk sums. For f64
// inputs this is plain f64 summation. For f32-lane inputs each lane adds at most kBlockVectors
// terms in f32 before the sum moves to f64, so the rounding error is at most ~kBlockVectors *
// 2^-24 of the block's magnitude (about 5e-7), and averages out across blocks: measured
// relative errors are ~1e-9 (tests/core/stats_precision_test.cpp). Widening every element
// instead would cost 3x the instructions and make the kernel compute-bound.

constexpr std::int64_t kBlockVectors = 8;
// Note [Prefetch every line]: how far ahead the fast pass asks for data, in bytes.
constexpr std::int64_t kPrefetchBytes = 4096;

template <class D>
struct Acc {
  using T = hn::TFromD<D>;
  using DU = hn::RebindToUnsigned<D>;
  using DD = hn::Repartition<double, D>;
  hn::Vec<D> min, max;
  hn::Vec<DU> min_abs_m1;   // (bits of |x|) - 1 as unsigned: zero wraps to the maximum
  hn::Vec<D> b1, b2, babs;  // block partials (Note [Block partials])
  hn::Vec<DD> s1a, s1b, s2a, s2b, sabsa, sabsb;
  // Counts come from mask popcounts on the scalar side, which is otherwise idle.
  std::int64_t zero = 0, negative = 0, below_normal = 0;
  std::int64_t nan = 0, pos_inf = 0, neg_inf = 0;
  std::int64_t t_over = 0, t_at_most_flush = 0, t_below_normal = 0;

  explicit Acc(D d) {
    const DU du;
    const DD dd;
    min = hn::Set(d, std::numeric_limits<T>::infinity());
    max = hn::Set(d, -std::numeric_limits<T>::infinity());
    min_abs_m1 = hn::Set(du, hwy::LimitsMax<hn::TFromD<DU>>());
    b1 = b2 = babs = hn::Zero(d);
    s1a = s1b = s2a = s2b = sabsa = sabsb = hn::Zero(dd);
  }
};

// Moves the block partials into the f64 chunk sums.
template <class D>
HWY_INLINE void FoldBlock(D d, Acc<D>& acc) {
  using DD = hn::Repartition<double, D>;
  const DD dd;
  if constexpr (sizeof(hn::TFromD<D>) == 8) {
    acc.s1a = hn::Add(acc.s1a, acc.b1);
    acc.s2a = hn::Add(acc.s2a, acc.b2);
    acc.sabsa = hn::Add(acc.sabsa, acc.babs);
  } else {
#if HWY_TARGET == HWY_SCALAR
    acc.s1a = hn::Add(acc.s1a, hn::PromoteTo(dd, acc.b1));
    acc.s2a = hn::Add(acc.s2a, hn::PromoteTo(dd, acc.b2));
    acc.sabsa = hn::Add(acc.sabsa, hn::PromoteTo(dd, acc.babs));
#else
    const hn::Half<D> dh;
    acc.s1a = hn::Add(acc.s1a, hn::PromoteTo(dd, hn::LowerHalf(dh, acc.b1)));
    acc.s1b = hn::Add(acc.s1b, hn::PromoteTo(dd, hn::UpperHalf(dh, acc.b1)));
    acc.s2a = hn::Add(acc.s2a, hn::PromoteTo(dd, hn::LowerHalf(dh, acc.b2)));
    acc.s2b = hn::Add(acc.s2b, hn::PromoteTo(dd, hn::UpperHalf(dh, acc.b2)));
    acc.sabsa = hn::Add(acc.sabsa, hn::PromoteTo(dd, hn::LowerHalf(dh, acc.babs)));
    acc.sabsb = hn::Add(acc.sabsb, hn::PromoteTo(dd, hn::UpperHalf(dh, acc.babs)));
#endif
  }
  acc.b1 = acc.b2 = acc.babs = hn::Zero(d);
}

// Limits broadcast once per chunk, in the compute type; each is exactly representable in it
// (or rounds to a value that classifies every input of that type identically).
template <class D>
struct Limits {
  hn::Vec<D> shift, subnormal_below, target_max, target_flush, target_min_normal;
  Limits(D d, const KernelParams& p, hn::TFromD<D> shift_value) {
    using T = hn::TFromD<D>;
    shift = hn::Set(d, shift_value);
    subnormal_below = hn::Set(d, static_cast<T>(p.subnormal_below));
    target_max = hn::Set(d, static_cast<T>(p.target_max));
    target_flush = hn::Set(d, static_cast<T>(p.target_flush));
    target_min_normal = hn::Set(d, static_cast<T>(p.target_min_normal));
  }
};

// Adds one vector's deviations, squares and magnitudes. kWide (f32 input only): widen each
// value to f64 first so deviations are exact and every sum is f64 (Note [Block partials]).
// kMaskedMagnitude: `magnitude` is not |v| (careful pass), so widen it rather than |v|.
template <bool kWide, bool kMaskedMagnitude, class D>
HWY_INLINE void AddMoments(D d, Acc<D>& acc, hn::Vec<D> v, hn::Vec<D> magnitude, const Limits<D>& lim,
                           double shift) {
  if constexpr (kWide && sizeof(hn::TFromD<D>) == 4) {
    using DD = hn::Repartition<double, D>;
    const DD dd;
    const auto k = hn::Set(dd, shift);
#if HWY_TARGET == HWY_SCALAR
    (void)d;
    (void)lim;
    const auto lo = hn::Sub(hn::PromoteTo(dd, v), k);
    acc.s1a = hn::Add(acc.s1a, lo);
    acc.s2a = hn::MulAdd(lo, lo, acc.s2a);
    acc.sabsa = hn::Add(acc.sabsa, hn::PromoteTo(dd, magnitude));
#else
    (void)lim;
    const hn::Half<D> dh;
    const auto wide_lo = hn::PromoteTo(dd, hn::LowerHalf(dh, v));
    const auto wide_hi = hn::PromoteTo(dd, hn::UpperHalf(dh, v));
    const auto lo = hn::Sub(wide_lo, k);
    const auto hi = hn::Sub(wide_hi, k);
    acc.s1a = hn::Add(acc.s1a, lo);
    acc.s1b = hn::Add(acc.s1b, hi);
    acc.s2a = hn::MulAdd(lo, lo, acc.s2a);
    acc.s2b = hn::MulAdd(hi, hi, acc.s2b);
    if constexpr (kMaskedMagnitude) {
      acc.sabsa = hn::Add(acc.sabsa, hn::PromoteTo(dd, hn::LowerHalf(dh, magnitude)));
      acc.sabsb = hn::Add(acc.sabsb, hn::PromoteTo(dd, hn::UpperHalf(dh, magnitude)));
    } else {
      acc.sabsa = hn::Add(acc.sabsa, hn::Abs(wide_lo));
      acc.sabsb = hn::Add(acc.sabsb, hn::Abs(wide_hi));
    }
    (void)d;
#endif
  } else {
    (void)d;
    (void)shift;
    const auto deviation = hn::Sub(v, lim.shift);
    acc.b1 = hn::Add(acc.b1, deviation);
    acc.b2 = hn::MulAdd(deviation, deviation, acc.b2);
    acc.babs = hn::Add(acc.babs, magnitude);
  }
}

// Note [Fast and careful passes]: the fast step assumes every value is finite. A NaN or Inf
// reaches the block sums (x - K is then NaN or Inf) and is caught when the chunk ends.
// kInlineSubnormal: count values below the dtype's smallest normal here (f16, fp8, whose
// subnormal ranges real data reaches: chosen per dtype in ChunkKernel); otherwise they are
// recounted only when the chunk's smallest magnitude shows there are any (CountBelowNormal).
template <bool kTarget, bool kWide, bool kInlineSubnormal, class D>
HWY_INLINE void FastStep(D d, Acc<D>& acc, hn::Vec<D> v, const Limits<D>& lim, double shift) {
  const hn::RebindToUnsigned<D> du;
  const auto zero = hn::Zero(d);
  const auto magnitude = hn::Abs(v);
  acc.min = hn::Min(acc.min, v);
  acc.max = hn::Max(acc.max, v);
  acc.min_abs_m1 = hn::Min(acc.min_abs_m1, hn::Sub(hn::BitCast(du, magnitude), hn::Set(du, 1)));
  acc.zero += static_cast<std::int64_t>(hn::CountTrue(d, hn::Eq(v, zero)));
  acc.negative += static_cast<std::int64_t>(hn::CountTrue(d, hn::Lt(v, zero)));
  if constexpr (kInlineSubnormal) {
    acc.below_normal += static_cast<std::int64_t>(hn::CountTrue(d, hn::Lt(magnitude, lim.subnormal_below)));
  }
  if constexpr (kTarget) {
    acc.t_over += static_cast<std::int64_t>(hn::CountTrue(d, hn::Gt(magnitude, lim.target_max)));
    acc.t_at_most_flush += static_cast<std::int64_t>(hn::CountTrue(d, hn::Le(magnitude, lim.target_flush)));
    acc.t_below_normal +=
        static_cast<std::int64_t>(hn::CountTrue(d, hn::Lt(magnitude, lim.target_min_normal)));
  }
  AddMoments<kWide, /*kMaskedMagnitude=*/false>(d, acc, v, magnitude, lim, shift);
}

// Classifies every lane; non-finite lanes (and, for the tail, lanes past the end) are kept
// out of every sum, min and max.
template <bool kTail, bool kWide, class D>
HWY_INLINE void CarefulStep(D d, Acc<D>& acc, hn::Vec<D> v, const Limits<D>& lim, bool want_target,
                            hn::Mask<D> valid, double shift) {
  using T = hn::TFromD<D>;
  const hn::RebindToUnsigned<D> du;
  const auto inf = hn::Set(d, std::numeric_limits<T>::infinity());
  const auto zero = hn::Zero(d);
  auto in_range = [&](hn::Mask<D> m) {
    if constexpr (kTail) {
      return hn::And(m, valid);
    } else {
      (void)valid;
      return m;
    }
  };
  auto count = [&](std::int64_t& counter, hn::Mask<D> m) {
    counter += static_cast<std::int64_t>(hn::CountTrue(d, in_range(m)));
  };
  const auto magnitude = hn::Abs(v);
  const auto finite = in_range(hn::Lt(magnitude, inf));
  // IsNaN, not Ne(v, v): Highway 1.0.3's AVX-512 Ne is an ordered compare, false for NaN.
  count(acc.nan, hn::IsNaN(v));
  count(acc.pos_inf, hn::Eq(v, inf));
  count(acc.neg_inf, hn::Eq(v, hn::Neg(inf)));
  count(acc.zero, hn::Eq(v, zero));
  count(acc.negative, hn::And(finite, hn::Lt(v, zero)));
  count(acc.below_normal, hn::Lt(magnitude, lim.subnormal_below));
  if (want_target) {
    count(acc.t_over, hn::And(finite, hn::Gt(magnitude, lim.target_max)));
    count(acc.t_at_most_flush, hn::Le(magnitude, lim.target_flush));
    count(acc.t_below_normal, hn::Lt(magnitude, lim.target_min_normal));
  }
  acc.min = hn::Min(acc.min, hn::IfThenElse(finite, v, inf));
  acc.max = hn::Max(acc.max, hn::IfThenElse(finite, v, hn::Neg(inf)));
  const auto nonzero = hn::And(finite, hn::Ne(v, zero));
  acc.min_abs_m1 = hn::Min(acc.min_abs_m1,
                           hn::Sub(hn::BitCast(du, hn::IfThenElse(nonzero, magnitude, inf)), hn::Set(du, 1)));
  // Non-finite lanes contribute x = shift: a zero deviation and (below) a zero magnitude.
  const auto kept = hn::IfThenElse(finite, v, lim.shift);
  AddMoments<kWide, /*kMaskedMagnitude=*/true>(d, acc, kept, hn::IfThenElseZero(finite, magnitude), lim,
                                               shift);
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
void Finish(D d, Acc<D>& acc, ChunkSums* out) {
  using T = hn::TFromD<D>;
  const hn::Repartition<double, D> dd;
  FoldBlock(d, acc);
  HWY_ALIGN T lanes[hn::MaxLanes(d)];
  out->min = std::numeric_limits<double>::infinity();
  out->max = -std::numeric_limits<double>::infinity();
  hn::Store(acc.min, d, lanes);
  for (size_t i = 0; i < hn::Lanes(d); ++i) out->min = std::min<double>(out->min, lanes[i]);
  hn::Store(acc.max, d, lanes);
  for (size_t i = 0; i < hn::Lanes(d); ++i) out->max = std::max<double>(out->max, lanes[i]);
  out->abs_max = std::max(0.0, std::max(out->max, -out->min));
  out->min_abs_nonzero = MinAbsNonzero(d, acc);
  // Zeros sit below every threshold: take them out of the "below" counts.
  out->zero = acc.zero;
  out->negative = acc.negative;
  out->subnormal = acc.below_normal - acc.zero;
  out->nan = acc.nan;
  out->pos_inf = acc.pos_inf;
  out->neg_inf = acc.neg_inf;
  out->target_overflow = acc.t_over;
  out->target_underflow = acc.t_at_most_flush - acc.zero;
  out->target_subnormal = acc.t_below_normal - acc.zero;
  out->s1 = SumLanes(dd, acc.s1a) + SumLanes(dd, acc.s1b);
  out->s2 = SumLanes(dd, acc.s2a) + SumLanes(dd, acc.s2b);
  out->sabs = SumLanes(dd, acc.sabsa) + SumLanes(dd, acc.sabsb);
}

// Loaders may offer Pair(d, p, a, b): 2 * Lanes(d) elements as two vectors in any lane order
// (every statistic is order-independent), when that is cheaper than two plain loads.
template <class Loader, class D>
concept PairLoader = requires(const Loader& l, D d, const std::uint8_t* q, hn::Vec<D>& v) {
  l.Pair(d, q, v, v);
};

template <bool kTarget, bool kWide, bool kInlineSubnormal, class D, class Loader>
HWY_INLINE void FastBody(D d, Acc<D>& acc, const std::uint8_t* p, std::int64_t body, std::size_t elem_size,
                         const Limits<D>& lim, double shift, const Loader& load) {
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(d));
  const std::int64_t block = kBlockVectors * lanes;
  std::int64_t i = 0;
  for (; i + block <= body; i += block) {
    // Note [Prefetch every line]: streaming from DRAM (a checkpoint's mapped pages, a large
    // activation), the block kPrefetchBytes ahead is asked for, every cache line of it, while this
    // one is computed. One line per block (of eight) left the kernel at half the memory's speed
    // out of cache: 4.4 against a plain read-and-sum's 8.9 GB/s on 256 MiB of f32 (bench/
    // stats_bench); every line, 10.0 (docs/performance.md). In cache it costs nothing measurable.
    {
      const std::int64_t bytes = block * static_cast<std::int64_t>(elem_size);
      const std::uint8_t* ahead = p + i * static_cast<std::int64_t>(elem_size) + kPrefetchBytes;
      for (std::int64_t b = 0; b < bytes; b += 64) hwy::Prefetch(ahead + b);
    }
    if constexpr (PairLoader<Loader, D>) {
      for (std::int64_t j = 0; j < block; j += 2 * lanes) {
        hn::Vec<D> a, b;
        load.Pair(d, p + (i + j) * elem_size, a, b);
        FastStep<kTarget, kWide, kInlineSubnormal>(d, acc, a, lim, shift);
        FastStep<kTarget, kWide, kInlineSubnormal>(d, acc, b, lim, shift);
      }
    } else {
      for (std::int64_t j = 0; j < block; j += lanes)
        FastStep<kTarget, kWide, kInlineSubnormal>(d, acc, load(d, p + (i + j) * elem_size), lim, shift);
    }
    FoldBlock(d, acc);
  }
  for (; i < body; i += lanes)
    FastStep<kTarget, kWide, kInlineSubnormal>(d, acc, load(d, p + i * elem_size), lim, shift);
}

// Values below the dtype's smallest normal (zeros included), for chunks whose fast pass did not
// count them. Only called when the chunk holds a subnormal, which is rare for f32 and bf16.
template <class D, class Loader>
HWY_NOINLINE std::int64_t CountBelowNormal(D d, const std::uint8_t* p, std::int64_t body,
                                           std::size_t elem_size, const Limits<D>& lim, const Loader& load) {
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(d));
  std::int64_t count = 0;
  for (std::int64_t i = 0; i < body; i += lanes) {
    count += static_cast<std::int64_t>(
        hn::CountTrue(d, hn::Lt(hn::Abs(load(d, p + i * elem_size)), lim.subnormal_below)));
  }
  return count;
}

template <class D>
HWY_INLINE double MinAbsNonzero(D d, const Acc<D>& acc) {
  using T = hn::TFromD<D>;
  using U = hn::TFromD<hn::RebindToUnsigned<D>>;
  const hn::RebindToUnsigned<D> du;
  HWY_ALIGN U uints[hn::MaxLanes(du)];
  hn::Store(acc.min_abs_m1, du, uints);
  U min_abs_m1 = hwy::LimitsMax<U>();
  for (size_t i = 0; i < hn::Lanes(du); ++i) min_abs_m1 = std::min(min_abs_m1, uints[i]);
  const auto bits = static_cast<U>(min_abs_m1 + 1);
  T value;
  std::memcpy(&value, &bits, sizeof(T));
  (void)d;
  // All lanes zero (bits 0 - 1 wrapped) or only non-finite (bits of Inf) mean "none".
  return (bits == 0 || !(value < std::numeric_limits<T>::infinity()))
             ? std::numeric_limits<double>::infinity()
             : static_cast<double>(value);
}

// kWide: widen every f32-lane value to f64 before summing (exact moments).
template <bool kWide, bool kInlineSubnormal, class D, class Loader>
void RunChunk(D d, const std::uint8_t* p, std::int64_t n, std::size_t elem_size, const KernelParams& params,
              Loader load, ChunkSums* out) {
  using T = hn::TFromD<D>;
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(d));
  const std::int64_t body = n - n % lanes;
  // The shift is rounded to the compute type; the driver uses the value actually subtracted.
  const T shift = static_cast<T>(params.shift);
  const Limits<D> lim(d, params, shift);
  const auto all = hn::FirstN(d, static_cast<size_t>(lanes));

  Acc<D> acc(d);
  const double wide_shift = static_cast<double>(shift);
  if (params.want_target) {
    FastBody<true, kWide, kInlineSubnormal>(d, acc, p, body, elem_size, lim, wide_shift, load);
  } else {
    FastBody<false, kWide, kInlineSubnormal>(d, acc, p, body, elem_size, lim, wide_shift, load);
  }
  FoldBlock(d, acc);
  const double inf = std::numeric_limits<double>::infinity();
  const double probe =
      SumLanes(hn::Repartition<double, D>(), hn::Add(hn::Add(acc.s1a, acc.s1b), hn::Add(acc.s2a, acc.s2b)));
  const bool careful = !(std::fabs(probe) < inf);
  if (!careful && !kInlineSubnormal) {
    // Zeros are below the normal range too; with no subnormal they are all there is.
    acc.below_normal = MinAbsNonzero(d, acc) < params.subnormal_below
                           ? CountBelowNormal(d, p, body, elem_size, lim, load)
                           : acc.zero;
  }
  if (careful) {
    // A NaN or Inf, or a sum that overflowed the compute type: classify every lane.
    acc = Acc<D>(d);
    std::int64_t i = 0;
    while (i < body) {
      const std::int64_t stop = std::min(body, i + kBlockVectors * lanes);
      for (; i < stop; i += lanes)
        CarefulStep<false, kWide>(d, acc, load(d, p + i * elem_size), lim, params.want_target, all,
                                  wide_shift);
      FoldBlock(d, acc);
    }
  }
  if (body < n) {
    // Tail: copy into a zeroed buffer so whole-vector loads stay in bounds; mask the padding.
    HWY_ALIGN std::uint8_t buffer[hn::MaxLanes(d) * 8] = {};
    std::memcpy(buffer, p + body * elem_size, static_cast<std::size_t>(n - body) * elem_size);
    CarefulStep<true, kWide>(d, acc, load(d, buffer), lim, params.want_target,
                             hn::FirstN(d, static_cast<size_t>(n - body)), wide_shift);
  }
  Finish(d, acc, out);
  out->count = n;
  out->shift = static_cast<double>(shift);
}

// f32-lane inputs: exact (widen every value) or fast (block partials); Note [Block partials].
template <bool kInlineSubnormal, class D, class Loader>
HWY_INLINE void RunWith(bool exact, D d, const std::uint8_t* p, std::int64_t n, std::size_t elem_size,
                        const KernelParams& params, Loader load, ChunkSums* out) {
  if (exact) {
    RunChunk<true, kInlineSubnormal>(d, p, n, elem_size, params, load, out);
  } else {
    RunChunk<false, kInlineSubnormal>(d, p, n, elem_size, params, load, out);
  }
}

void ChunkKernel(const void* data, std::int64_t n, DType dtype, const KernelParams& params, ChunkSums* out) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  const hn::ScalableTag<float> df;
  const hn::ScalableTag<double> dd;
  const std::size_t size = dtype_size(dtype);
  switch (dtype) {
    case DType::f64:
      return RunChunk<false, false>(
          dd, p, n, size, params,
          [](auto d, const std::uint8_t* q) { return hn::LoadU(d, reinterpret_cast<const double*>(q)); },
          out);
    case DType::f32:
      return RunWith<false>(
          params.exact, df, p, n, size, params,
          [](auto d, const std::uint8_t* q) { return hn::LoadU(d, reinterpret_cast<const float*>(q)); }, out);
    case DType::f16:
      return RunWith<true>(
          params.exact, df, p, n, size, params, [](auto d, const std::uint8_t* q) { return LoadF16(d, q); },
          out);
    case DType::bf16:
      return RunWith<false>(params.exact, df, p, n, size, params, BF16Loader{}, out);
    case DType::f8_e4m3fn:
      return RunWith<true>(
          params.exact, df, p, n, size, params,
          [](auto d, const std::uint8_t* q) { return LoadE4M3FN(d, q); }, out);
    case DType::f8_e5m2:
      return RunWith<true>(
          params.exact, df, p, n, size, params, [](auto d, const std::uint8_t* q) { return LoadE5M2(d, q); },
          out);
    case DType::i8:
      return RunWith<false>(
          params.exact, df, p, n, size, params,
          [](auto d, const std::uint8_t* q) { return LoadSmallInt<decltype(d), std::int8_t>(d, q); }, out);
    case DType::u8:
      return RunWith<false>(
          params.exact, df, p, n, size, params,
          [](auto d, const std::uint8_t* q) { return LoadSmallInt<decltype(d), std::uint8_t>(d, q); }, out);
    case DType::i16:
      return RunWith<false>(
          params.exact, df, p, n, size, params,
          [](auto d, const std::uint8_t* q) { return LoadSmallInt<decltype(d), std::int16_t>(d, q); }, out);
    case DType::boolean:
      return RunWith<false>(
          params.exact, df, p, n, size, params, [](auto d, const std::uint8_t* q) { return LoadBool(d, q); },
          out);
    case DType::i32:
      return RunChunk<false, false>(
          dd, p, n, size, params, [](auto d, const std::uint8_t* q) { return LoadI32(d, q); }, out);
    case DType::i64:
      return RunChunk<false, false>(
          dd, p, n, size, params, [](auto d, const std::uint8_t* q) { return LoadI64(d, q); }, out);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace tfdebug::detail
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace tfdebug::detail {

const std::vector<KernelTarget>& supported_kernels() {
  // Asking the CPU is slow (cpuid traps to the hypervisor in a VM: ~15 us), so ask once.
  static const std::vector<KernelTarget> kSupported = [] {
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
  }();
  return kSupported;
}

}  // namespace tfdebug::detail
#endif  // HWY_ONCE
