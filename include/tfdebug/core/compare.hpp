// Element-wise comparison of two tensors of the same shape (any dtypes), in one pass.
//
//   tfdebug::Comparison c = tfdebug::compare_tensors(before, after, 1e-5, 1e-8);
//   c.allclose;              // numpy.allclose(after, before, rtol, atol, equal_nan=True)
//   c.first_mismatch;        // row-major multi-index of the first element that is not close
//   c.cosine, c.max_abs_diff, c.relative_l2;
//
// Closeness follows numpy.isclose(a, b): |a - b| <= atol + rtol * |b|, where NaN equals NaN
// and an infinity equals only itself. Norms, cosine and differences are over the positions where
// both values are finite, in f64.
#pragma once

#include <cstdint>
#include <vector>

#include "tfdebug/core/tensor_view.hpp"

namespace tfdebug {

struct Comparison {
  std::int64_t count = 0;
  std::int64_t mismatches = 0;          // elements that are not close
  std::int64_t finiteness_changes = 0;  // finite in one tensor, NaN or Inf in the other
  bool allclose = true;
  std::vector<std::int64_t> first_mismatch;  // empty when allclose
  double max_abs_diff = 0;                   // over finite pairs
  double max_rel_diff = 0;                   // |a - b| / |b| over finite pairs with b != 0
  double cosine = 1;                         // sum(a*b) / (|a| |b|); 1 when both are zero
  double l2_a = 0, l2_b = 0, l2_diff = 0;
  double relative_l2 = 0;  // |a - b| / |a| (0 when both are zero; inf when a is)
};

// Throws tfdebug::Error when the shapes differ, or rtol/atol are negative.
Comparison compare_tensors(TensorView a, TensorView b, double rtol = 1e-5, double atol = 1e-8);

}  // namespace tfdebug
