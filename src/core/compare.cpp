#include "tfdebug/core/compare.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>

#include "tensor_walk.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug {
namespace {

// Both views decoded to double, block by block, in logical order.
template <class Fn>
void visit_pairs(const TensorView& a, const TensorView& b, Fn&& fn) {
  const std::int64_t n = a.numel();
  const auto size_a = static_cast<std::int64_t>(a.element_size());
  const auto size_b = static_cast<std::int64_t>(b.element_size());
  std::vector<std::byte> raw_a(static_cast<std::size_t>(detail::kValueBlock * size_a));
  std::vector<std::byte> raw_b(static_cast<std::size_t>(detail::kValueBlock * size_b));
  std::vector<double> va(static_cast<std::size_t>(detail::kValueBlock));
  std::vector<double> vb(static_cast<std::size_t>(detail::kValueBlock));
  for (std::int64_t start = 0; start < n; start += detail::kValueBlock) {
    const std::int64_t count = std::min(detail::kValueBlock, n - start);
    detail::gather_range(a, start, count, raw_a.data());
    detail::gather_range(b, start, count, raw_b.data());
    for (std::int64_t i = 0; i < count; ++i) {
      va[static_cast<std::size_t>(i)] = load_as_double(raw_a.data(), a.dtype(), i);
      vb[static_cast<std::size_t>(i)] = load_as_double(raw_b.data(), b.dtype(), i);
    }
    fn(start, count, va.data(), vb.data());
  }
}

}  // namespace

Comparison compare_tensors(TensorView a, TensorView b, double rtol, double atol) {
  if (!std::equal(a.shape().begin(), a.shape().end(), b.shape().begin(), b.shape().end())) {
    throw Error("compare_tensors: shapes differ: " + a.describe() + " vs " + b.describe());
  }
  if (!(rtol >= 0) || !(atol >= 0)) throw Error("compare_tensors: rtol and atol must be non-negative");
  // Note [Broadcast views] (tensor_view.hpp): dimensions that both views repeat are compared
  // once, and the counts and norms scaled. Views that repeat along different dimensions would
  // need a visit per element of the whole: refused when that is far more than they store.
  std::array<std::int64_t, kMaxRank> shape{};
  std::int64_t repeats = 1;
  for (int d = 0; d < a.rank(); ++d) {
    shape[std::size_t(d)] = a.shape(d);
    if (a.stride(d) == 0 && b.stride(d) == 0 && a.shape(d) > 1 && a.numel() > 0) {
      repeats *= a.shape(d);
      shape[std::size_t(d)] = 1;
    }
  }
  if (repeats > 1) {
    const std::span<const std::int64_t> dims(shape.data(), std::size_t(a.rank()));
    Comparison c = compare_tensors(TensorView(a.data(), a.dtype(), dims, a.strides()),
                                   TensorView(b.data(), b.dtype(), dims, b.strides()), rtol, atol);
    c.count *= repeats;
    c.mismatches *= repeats;
    c.finiteness_changes *= repeats;
    const double root = std::sqrt(static_cast<double>(repeats));
    c.l2_a *= root;
    c.l2_b *= root;
    c.l2_diff *= root;
    return c;
  }
  std::int64_t repeats_a = 1;
  std::int64_t repeats_b = 1;
  const std::int64_t stored =
      distinct_elements(a, repeats_a).numel() + distinct_elements(b, repeats_b).numel();
  constexpr std::int64_t kMaxVisitsPerStored = 64;
  if (a.numel() > (std::int64_t{1} << 24) && a.numel() / kMaxVisitsPerStored > stored) {
    throw Error("compare_tensors: the views repeat their elements along different dimensions (" +
                a.describe() + " vs " + b.describe() + "): comparing them would visit " +
                std::to_string(a.numel()) + " pairs of " + std::to_string(stored) + " stored elements");
  }
  Comparison c;
  c.count = a.numel();
  double dot = 0, aa = 0, bb = 0, dd = 0;
  std::int64_t first = -1;
  visit_pairs(a, b, [&](std::int64_t start, std::int64_t count, const double* x, const double* y) {
    for (std::int64_t i = 0; i < count; ++i) {
      const double p = x[i];
      const double q = y[i];
      bool close;
      if (std::isfinite(p) && std::isfinite(q)) {
        const double diff = std::fabs(p - q);
        close = diff <= atol + rtol * std::fabs(q);
        c.max_abs_diff = std::max(c.max_abs_diff, diff);
        if (q != 0) c.max_rel_diff = std::max(c.max_rel_diff, diff / std::fabs(q));
        dot += p * q;
        aa += p * p;
        bb += q * q;
        dd += (p - q) * (p - q);
      } else {
        close = (std::isnan(p) && std::isnan(q)) || p == q;
        if (std::isfinite(p) != std::isfinite(q)) ++c.finiteness_changes;
      }
      if (!close) {
        ++c.mismatches;
        if (first < 0) first = start + i;
      }
    }
  });
  c.allclose = c.mismatches == 0;
  if (first >= 0) {
    c.first_mismatch.resize(static_cast<std::size_t>(a.rank()));
    for (int d = a.rank() - 1; d >= 0; --d) {
      c.first_mismatch[static_cast<std::size_t>(d)] = first % a.shape(d);
      first /= a.shape(d);
    }
  }
  c.l2_a = std::sqrt(aa);
  c.l2_b = std::sqrt(bb);
  c.l2_diff = std::sqrt(dd);
  // dot / sqrt(aa * bb) is exactly 1 for identical tensors (sqrt of a rounded square is exact);
  // fall back to the product of norms where aa * bb would overflow.
  if (aa == 0 && bb == 0) {
    c.cosine = 1.0;
  } else if (aa == 0 || bb == 0) {
    c.cosine = 0.0;
  } else {
    const double product = aa * bb;
    c.cosine =
        std::clamp(std::isfinite(product) ? dot / std::sqrt(product) : dot / (c.l2_a * c.l2_b), -1.0, 1.0);
  }
  c.relative_l2 =
      c.l2_a > 0 ? c.l2_diff / c.l2_a : (c.l2_diff > 0 ? std::numeric_limits<double>::infinity() : 0.0);
  return c;
}

}  // namespace tfdebug
