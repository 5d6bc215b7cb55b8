// Quantiles of the finite values of a tensor: exact, and a bounded-memory sketch.
//
//   std::vector<double> q = tfdebug::quantiles_exact(view, {0.01, 0.5, 0.99});
//   tfdebug::QuantileSketch sketch;            // relative accuracy 2^-8 by default
//   sketch.add(view);                          // may be called for many tensors, or merged
//   double median = sketch.quantile(0.5);
//
// quantiles_exact uses numpy's default ("linear") definition: for probability p over the n
// sorted finite values, h = p * (n - 1) and the result interpolates x[floor(h)] and x[ceil(h)].
// It copies the finite values (8 bytes each).
//
// QuantileSketch — Note [Relative-error sketch]: every finite value goes to a bucket keyed by
// its sign, binary exponent and top `mantissa_bits` mantissa bits, so a bucket spans values
// within a factor (1 + 2^-m) of each other. quantile(p) walks the buckets to the element of
// rank k = floor(p * (n - 1)) (numpy's "lower" method) and returns its bucket's midpoint, so
//     |sketch.quantile(p) - x[k]| <= 2^-(m+1) * |x[k]|     for |x[k]| >= DBL_MIN (2.2e-308),
// and exactly 0 for zeros. Memory is bounded by the number of occupied exponent ranges (at most
// 2 * 2048 * 2^m counters; in practice a few KiB), independent of the element count. Sketches
// merge exactly (counts add), so results never depend on how the data was split.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <span>
#include <vector>

#include "tfdebug/core/tensor_view.hpp"

namespace tfdebug {

// Throws tfdebug::Error for a probability outside [0, 1] or when there is no finite value.
std::vector<double> quantiles_exact(TensorView view, std::span<const double> probabilities);
inline std::vector<double> quantiles_exact(TensorView view, std::initializer_list<double> probabilities) {
  return quantiles_exact(view, std::span<const double>(probabilities.begin(), probabilities.size()));
}

class QuantileSketch {
 public:
  // 1 <= mantissa_bits <= 20; relative accuracy is 2^-(mantissa_bits + 1).
  explicit QuantileSketch(int mantissa_bits = 7);

  void add(double value);
  void add(TensorView view);
  void merge(const QuantileSketch& other);  // both must use the same mantissa_bits

  std::int64_t count() const noexcept { return count_; }  // finite values added
  double relative_accuracy() const noexcept;
  // Throws tfdebug::Error for p outside [0, 1] or an empty sketch.
  double quantile(double p) const;
  // Counters in use (a measure of memory: 8 bytes each plus a small per-range overhead).
  std::size_t buckets_in_use() const noexcept;

 private:
  int mantissa_bits_;
  std::int64_t count_ = 0;
  std::int64_t zeros_ = 0;
  // Key: (biased exponent << m) | top m mantissa bits, per sign; value: a dense page of 2^m
  // counters per exponent, allocated on first use.
  std::map<int, std::vector<std::int64_t>> negative_;  // by exponent
  std::map<int, std::vector<std::int64_t>> positive_;
};

}  // namespace tfdebug
