// Private: the per-chunk interface between the stats driver (stats.cpp) and the SIMD kernels
// (stats_kernel.cpp, compiled once per Highway target).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tfdebug/core/dtype.hpp"

namespace tfdebug::detail {

// Elements per chunk. Fixed, so results never depend on the thread count: every partial
// result covers the same elements whatever thread computed it (Note [Deterministic merge]).
inline constexpr std::int64_t kStatsChunk = 16384;

struct KernelParams {
  double shift = 0;            // K in Note [Shifted moments]
  double subnormal_below = 0;  // smallest normal of the input dtype
  bool exact = false;          // f32-lane inputs: widen every value (Note [Block partials])
  bool want_target = false;
  double target_max = 0;         // overflow: finite and |x| > target_max
  double target_flush = 0;       // underflow: x != 0 and |x| <= target_flush
  double target_min_normal = 0;  // target subnormal: x != 0 and |x| < target_min_normal
};

// Raw sums over one contiguous chunk. min/max/abs_max/min_abs_nonzero hold +inf/-inf/0/+inf
// when there is no (non-zero) finite value.
struct ChunkSums {
  std::int64_t count = 0;
  std::int64_t nan = 0, pos_inf = 0, neg_inf = 0, zero = 0, subnormal = 0, negative = 0;
  std::int64_t target_overflow = 0, target_underflow = 0, target_subnormal = 0;
  double min = 0, max = 0, abs_max = 0, min_abs_nonzero = 0;
  double shift = 0;  // the shift actually subtracted: params.shift rounded to the compute type
  double s1 = 0;     // sum of (x - shift) over finite x
  double s2 = 0;     // sum of (x - shift)^2 over finite x
  double sabs = 0;   // sum of |x| over finite x
};

using ChunkKernelFn = void (*)(const void* data, std::int64_t n, DType dtype, const KernelParams& params,
                               ChunkSums* out);

struct KernelTarget {
  std::int64_t hwy_target;
  const char* name;
  ChunkKernelFn fn;
};

// Kernels compiled into this build that the CPU supports, best first.
const std::vector<KernelTarget>& supported_kernels();

// The plain scalar chunk kernel with the same contract; the reference for the SIMD targets.
void scalar_chunk_kernel(const void* data, std::int64_t n, DType dtype, const KernelParams& params,
                         ChunkSums* out);

}  // namespace tfdebug::detail
