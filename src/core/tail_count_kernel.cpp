// count_outside (histogram.hpp): the finite values below `low` or at or above `high`, one pass.
// The saturation rule asks it of every tanh and sigmoid output a diagnose step observes (the
// values within a margin of an asymptote), so f32 runs through Highway: two compares, a
// finiteness test and a mask count a vector, on the best SIMD target. Other dtypes and strided
// views compare in f64, value by value.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "tail_count_kernel.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cmath>
#include <cstdint>
#include <cstring>

HWY_BEFORE_NAMESPACE();
namespace tfdebug::detail {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

std::int64_t Outside32(const float* HWY_RESTRICT data, std::int64_t n, float low, float high) {
  const hn::ScalableTag<float> d;
  const std::int64_t lanes = static_cast<std::int64_t>(hn::Lanes(d));
  const auto lo = hn::Set(d, low);
  const auto hi = hn::Set(d, high);
  const auto outside = [&](auto v) { return hn::And(hn::Or(hn::Lt(v, lo), hn::Ge(v, hi)), hn::IsFinite(v)); };
  std::int64_t count = 0;
  std::int64_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    count += static_cast<std::int64_t>(hn::CountTrue(d, outside(hn::LoadU(d, data + i))));
    count += static_cast<std::int64_t>(hn::CountTrue(d, outside(hn::LoadU(d, data + i + lanes))));
  }
  // Views may be misaligned: copy each remaining value out.
  for (; i < n; ++i) {
    float x;
    std::memcpy(&x, data + i, sizeof x);
    count += static_cast<std::int64_t>((x < low || x >= high) && std::isfinite(x));
  }
  return count;
}

}  // namespace HWY_NAMESPACE
}  // namespace tfdebug::detail
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "tfdebug/core/histogram.hpp"
#include "tfdebug/core/tensor.hpp"

namespace tfdebug {
namespace detail {
HWY_EXPORT(Outside32);
}  // namespace detail

std::int64_t count_outside(TensorView view, double low, double high) {
  const std::int64_t n = view.numel();
  if (n == 0) return 0;
  if (view.dtype() == DType::f32 && view.is_contiguous())
    return HWY_DYNAMIC_DISPATCH(detail::Outside32)(static_cast<const float*>(view.data()), n,
                                                   static_cast<float>(low), static_cast<float>(high));
  const Tensor values = Tensor::copy_of(view, DType::f64);
  const auto* x = static_cast<const double*>(values.view().data());
  std::int64_t count = 0;
  for (std::int64_t i = 0; i < n; ++i) count += (x[i] < low || x[i] >= high) && std::isfinite(x[i]);
  return count;
}

}  // namespace tfdebug
#endif  // HWY_ONCE
