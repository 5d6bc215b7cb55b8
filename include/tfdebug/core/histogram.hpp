// Histograms of tensor values. Non-finite values are never binned: they are counted apart.
//
//   auto h = tfdebug::histogram_fixed(view, 20);             // 20 equal bins over [min, max]
//   auto g = tfdebug::histogram_fixed(view, 20, -1.0, 1.0);  // explicit range
//   auto m = tfdebug::histogram_log2(view);                  // one bin per power of two of |x|
//   auto t = tfdebug::histogram_tensorflow(view);            // TensorFlow's default buckets
//
// Conventions: fixed bins are half-open [e_i, e_i+1) except the last, which includes hi
// (numpy.histogram's rule); finite values outside [lo, hi] go to `below` / `above`.
// TensorFlow buckets follow TF's rule: bucket i counts values v with limit[i-1] <= v < limit[i].
#pragma once

#include <cstdint>
#include <vector>

#include "tfdebug/core/tensor_view.hpp"

namespace tfdebug {

struct Histogram {
  std::vector<double> edges;         // fixed: bins + 1 edges; tensorflow: the bucket limits
  std::vector<std::int64_t> counts;  // one per bin (tensorflow: one per limit)
  std::int64_t below = 0;            // finite values < edges.front() (fixed bins only)
  std::int64_t above = 0;            // finite values > edges.back() (fixed bins only)
  std::int64_t nan = 0;
  std::int64_t pos_inf = 0;
  std::int64_t neg_inf = 0;
  std::int64_t total() const noexcept;  // every element, binned or not
};

// `bins` equal-width bins over [lo, hi]. Throws tfdebug::Error if bins < 1, lo > hi or either
// bound is not finite. With lo == hi, values equal to lo land in the last bin.
Histogram histogram_fixed(TensorView view, int bins, double lo, double hi);
// Over [min, max] of the finite values (from compute_stats); a tensor with no finite value
// yields empty bins.
Histogram histogram_fixed(TensorView view, int bins);

// The finite values x with x < low or x >= high (NaN and +-Inf never count), in one pass; f32
// compares in f32 (low and high rounded to f32 first), every other dtype in f64. What the outer
// bins of a fixed histogram hold, without the bins: a saturated activation's tails.
std::int64_t count_outside(TensorView view, double low, double high);

// Log-magnitude histogram: bin k counts finite non-zero values with 2^e <= |x| < 2^(e+1),
// e = min_exponent + k, for every exponent from the smallest to the largest present.
struct Log2Histogram {
  int min_exponent = 0;
  std::vector<std::int64_t> counts;  // positive and negative values together
  std::int64_t zero = 0;
  std::int64_t nan = 0, pos_inf = 0, neg_inf = 0;
};
Log2Histogram histogram_log2(TensorView view);

// TensorFlow's default histogram bucket limits: 1e-12 * 1.1^k while below 1e20 (774 limits)
// and DBL_MAX, mirrored to negatives around 0 — 1551 limits in all.
const std::vector<double>& tensorflow_bucket_limits();
// Counts per TensorFlow bucket (counts.size() == edges.size() == 1551); NaN and Inf apart.
Histogram histogram_tensorflow(TensorView view);

}  // namespace tfdebug
