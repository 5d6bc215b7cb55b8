// The scalar chunk kernel: one element at a time, in double, with every classification written
// out plainly. It is the reference the SIMD targets are tested against ("reference" target).
#include <cmath>
#include <limits>

#include "stats_kernel.hpp"

namespace tfdebug::detail {

void scalar_chunk_kernel(const void* data, std::int64_t n, DType dtype, const KernelParams& params,
                         ChunkSums* out) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  ChunkSums s;
  s.count = n;
  s.shift = params.shift;
  s.min = kInf;
  s.max = -kInf;
  s.abs_max = 0;
  s.min_abs_nonzero = kInf;
  for (std::int64_t i = 0; i < n; ++i) {
    const double x = load_as_double(data, dtype, i);
    if (std::isnan(x)) {
      ++s.nan;
      continue;
    }
    if (std::isinf(x)) {
      ++(x > 0 ? s.pos_inf : s.neg_inf);
      continue;
    }
    const double magnitude = std::fabs(x);
    if (x == 0) {
      ++s.zero;
    } else {
      if (x < 0) ++s.negative;
      if (magnitude < params.subnormal_below) ++s.subnormal;
      if (magnitude < s.min_abs_nonzero) s.min_abs_nonzero = magnitude;
      if (params.want_target) {
        if (magnitude <= params.target_flush) ++s.target_underflow;
        if (magnitude < params.target_min_normal) ++s.target_subnormal;
      }
    }
    if (params.want_target && magnitude > params.target_max) ++s.target_overflow;
    if (x < s.min) s.min = x;
    if (x > s.max) s.max = x;
    if (magnitude > s.abs_max) s.abs_max = magnitude;
    const double deviation = x - params.shift;
    s.s1 += deviation;
    s.s2 += deviation * deviation;
    s.sabs += magnitude;
  }
  *out = s;
}

}  // namespace tfdebug::detail
