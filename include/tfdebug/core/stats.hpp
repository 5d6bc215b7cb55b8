// The stats kernel: every statistic tfdebug reports about a tensor comes from one fused pass.
//
//   tfdebug::StatsOptions options;
//   options.target = tfdebug::DType::f16;          // how would this tensor fare in f16?
//   tfdebug::Stats s = tfdebug::compute_stats(view, options);
//   s.nan, s.pos_inf, s.neg_inf;                   // non-finite values are counted, never dropped
//   s.min, s.max, s.mean, s.std;                   // over finite values only
//   s.target->overflow;                            // finite values beyond f16's range
//
// Definitions (docs/stats.md has the full page):
//   * counts partition the elements: count = nan + pos_inf + neg_inf + zero + negative + positive,
//     where negative/positive count finite non-zero values. `subnormal` counts non-zero values
//     below the smallest normal of the tensor's own dtype (f16 subnormals for an f16 tensor).
//   * min, max, abs_max, min_abs_nonzero, mean, variance, std, l1 and l2 are over the finite
//     values; with no finite value they are NaN (min_abs_nonzero: with no finite non-zero).
//   * variance is the population variance (divide by the number of finite values).
//   * range_used = abs_max / the dtype's largest finite value: 0.036 uses 3.6% of the range
//     (its headroom is 1 / range_used = 28x). Named so, as "headroom" reads as room left.
//   * target: range_used = abs_max / the target's largest finite value; overflow counts finite values with
//     |x| > target max (they would saturate or become Inf/NaN); underflow counts non-zero values
//     with |x| <= half the target's smallest subnormal (they round to zero); target_subnormal
//     counts non-zero values below the target's smallest normal (they lose precision).
//
// Results do not depend on the thread count or on the SIMD target beyond the last bits of the
// floating-point sums (and not at all on the thread count). Strided views give bit-identical
// answers to contiguous copies; views that repeat their elements (zero strides) are summed over
// the stored elements (Note [Broadcast views]) and agree with copies to rounding in the sums.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tfdebug/core/quantized.hpp"
#include "tfdebug/core/tensor_view.hpp"

namespace tfdebug {

struct StatsOptions {
  // Also measure how the values would fit this dtype (f16, bf16, f8_e4m3fn, f8_e5m2, ...).
  std::optional<DType> target;
  // Worker threads for large tensors; 0 means one per hardware thread.
  int threads = 1;
  // Moments (mean, variance, L1, L2) of f32, f16, bf16, fp8 and small-integer tensors are by
  // default summed in f32 for 8 vectors at a time, then in f64: relative error below ~1e-7 and
  // typically ~1e-9, at memory speed. exact = true widens every value to f64 first (agrees with
  // an f64 reference to ~1e-15, ~35% slower for f32). f64, i32 and i64 tensors are always exact.
  bool exact = false;
  // SIMD target: "auto" (the best the CPU supports), one of simd_targets(), or "reference"
  // (the plain scalar implementation every SIMD target is checked against).
  std::string simd = "auto";
};

struct TargetFit {
  DType dtype = DType::f16;
  double range_used = 0;         // abs_max / max_finite(dtype)
  std::int64_t overflow = 0;     // finite, |x| > max_finite(dtype)
  std::int64_t underflow = 0;    // non-zero, |x| <= min_subnormal(dtype) / 2
  std::int64_t subnormal = 0;    // non-zero, |x| < min_normal(dtype)
  double overflow_fraction = 0;  // of all elements
  double underflow_fraction = 0;
};

struct Stats {
  DType dtype = DType::f32;
  std::int64_t count = 0;
  std::int64_t nan = 0;
  std::int64_t pos_inf = 0;
  std::int64_t neg_inf = 0;
  std::int64_t zero = 0;
  std::int64_t subnormal = 0;
  std::int64_t negative = 0;
  std::int64_t positive = 0;
  double min = 0;
  double max = 0;
  double abs_max = 0;
  double min_abs_nonzero = 0;
  double mean = 0;
  double variance = 0;
  double std = 0;
  double l1 = 0;
  double l2 = 0;
  double range_used = 0;  // abs_max / max_finite(dtype)
  std::optional<TargetFit> target;

  std::int64_t finite() const noexcept { return count - nan - pos_inf - neg_inf; }
  std::int64_t nonfinite() const noexcept { return nan + pos_inf + neg_inf; }
};

// One fused pass over `view` (over its distinct elements when it repeats them: Note [Broadcast
// views] in tensor_view.hpp). Throws tfdebug::Error for an unknown options.simd name.
Stats compute_stats(TensorView view, const StatsOptions& options = {});

// The statistics of `s`'s values, each taken `times` times (Note [Broadcast views] in
// tensor_view.hpp): counts and L1 scale by `times`, L2 by its square root; range, moments and
// fractions are unchanged.
Stats repeated(Stats s, std::int64_t times);

// The statistics of a block-quantised tensor's decoded values (dtype f32; range_used and subnormals
// relative to f32), decoded one chunk at a time (Note [Quantised chunks] in stats.cpp).
Stats compute_stats(const QuantizedView& view, const StatsOptions& options = {});

// Statistics of a tensor that arrives in pieces (row blocks read one at a time, decoded rows):
// add the pieces in logical order, or build accumulators for consecutive ranges on several
// threads and merge them in order. Agrees with compute_stats on the whole to rounding.
class StatsAccumulator {
 public:
  explicit StatsAccumulator(DType dtype, const StatsOptions& options = {});
  StatsAccumulator(StatsAccumulator&&) noexcept;
  StatsAccumulator& operator=(StatsAccumulator&&) noexcept;
  ~StatsAccumulator();

  void add(TensorView values);                     // values.dtype() must be the dtype
  void merge_from(const StatsAccumulator& later);  // `later` covers the values after these
  Stats result() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Per-row summaries of a floating-point matrix (rank 2) in one SIMD pass, for the dead-unit and
// outlier-channel rules: row_abs_max[r] = the largest finite |x| in row r (0 when it has none),
// row_zero[r] = 1 when every value of row r is +-0, and column_nonzero[c] is set to 1 (never
// cleared) when column c holds a value that is not +-0 (NaN counts as non-zero), so calls for
// consecutive row blocks accumulate. Throws tfdebug::Error for other ranks or dtypes.
void row_summaries(TensorView matrix, double* row_abs_max, std::uint8_t* row_zero,
                   std::uint8_t* column_nonzero);
// row_summaries' column_nonzero alone, several times faster (no per-row reduction): the
// per-unit activity of a [rows, units] output for the dead-unit rule. Same contract: set,
// never cleared; NaN counts as non-zero; tfdebug::Error for other ranks or dtypes.
void column_nonzero(TensorView matrix, std::uint8_t* column_nonzero);

// The one-pass summary a live session takes of op outputs every step: does anything hold a NaN
// or Inf, any +-0, and what range do the values span. Several times compute_stats' speed on
// contiguous f32, f64, f16 and bf16 (the bits are read as integers; no moments, no counts);
// other dtypes and strided views take compute_stats. When nonfinite is true, min, max and abs_max
// are not measured (0): compute_stats has the counts and the finite range.
struct Extremes {
  std::int64_t count = 0;
  bool nonfinite = false;  // some value is NaN, +Inf or -Inf
  bool zero = false;       // some value is +0 or -0
  double min = 0;
  double max = 0;
  double abs_max = 0;
  // The L2 norm of the values: compute_range_l2 only (NaN from the others, and when nonfinite).
  double l2 = std::numeric_limits<double>::quiet_NaN();
  // How many values are +0 or -0: compute_range_zeros only (0 from the others).
  std::int64_t zeros = 0;
};
Extremes compute_extremes(TensorView view);
// compute_extremes without the zero test (zero is false, not measured): three integer min/max per
// vector on contiguous f32 and f64, for summaries that need only the range and NaN/Inf.
Extremes compute_range(TensorView view);
// compute_range and the L2 norm (sum of squares in f64) in one pass: the one-pass summary of a
// gradient or an update, whose rules read only its norm. f64 values whose squares leave f64's
// range take the full statistics' norm, which scales them.
Extremes compute_range_l2(TensorView view);
// compute_range and the number of values that are +-0 (Extremes::zeros; zero is zeros > 0) in one
// pass: a compare and an add per vector more than compute_range, on contiguous f32 and f64 (the
// others from the full statistics). The per-step metrics' zero count of a forward output.
Extremes compute_range_zeros(TensorView view);
// compute_extremes(view).nonfinite == false; one operation per vector on contiguous f32 and f64.
bool all_finite(TensorView view);

// SIMD targets this build has code for and this CPU supports, best first, e.g.
// {"AVX3", "AVX2", "SSE4", "SSSE3", "EMU128"}.
std::vector<std::string> simd_targets();
// The target "auto" resolves to on this CPU.
std::string best_simd_target();

}  // namespace tfdebug
