#include "tfdebug/core/histogram.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>

#include "tensor_walk.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/stats.hpp"

namespace tfdebug {
namespace {

// Counts x into nan/inf; returns true when x is finite and still to be binned.
bool count_nonfinite(double x, std::int64_t& nan, std::int64_t& pos_inf, std::int64_t& neg_inf) {
  if (std::isnan(x)) {
    ++nan;
    return false;
  }
  if (std::isinf(x)) {
    ++(x > 0 ? pos_inf : neg_inf);
    return false;
  }
  return true;
}

}  // namespace

std::int64_t Histogram::total() const noexcept {
  std::int64_t t = below + above + nan + pos_inf + neg_inf;
  for (std::int64_t c : counts) t += c;
  return t;
}

Histogram histogram_fixed(TensorView view, int bins, double lo, double hi) {
  if (bins < 1) throw Error("histogram: bins must be at least 1, got " + std::to_string(bins));
  if (!std::isfinite(lo) || !std::isfinite(hi) || lo > hi) {
    throw Error("histogram: range [" + std::to_string(lo) + ", " + std::to_string(hi) +
                "] must be finite with lo <= hi");
  }
  Histogram h;
  h.edges.resize(static_cast<std::size_t>(bins) + 1);
  // Edges as numpy.linspace computes them (i * step + lo), so bin assignments match
  // numpy.histogram. hi - lo can overflow (lo = -DBL_MAX, hi = DBL_MAX): then interpolate as
  // lo*(1-t) + hi*t, and measure positions in halves, which never overflow. Found by
  // fuzz/histogram_fuzz.cpp.
  const double step = (hi - lo) / bins;
  for (int i = 0; i <= bins; ++i) {
    const double t = static_cast<double>(i) / bins;
    h.edges[static_cast<std::size_t>(i)] = std::isfinite(step) ? i * step + lo : lo * (1 - t) + hi * t;
  }
  h.edges.front() = lo;
  h.edges.back() = hi;
  h.counts.assign(static_cast<std::size_t>(bins), 0);
  const double half_width = hi / 2 - lo / 2;
  detail::visit_values(view, [&](std::span<const double> values) {
    for (double x : values) {
      if (!count_nonfinite(x, h.nan, h.pos_inf, h.neg_inf)) continue;
      if (x < lo) {
        ++h.below;
      } else if (x > hi) {
        ++h.above;
      } else {
        const double position = half_width > 0 ? (x / 2 - lo / 2) / half_width * bins : bins - 1.0;
        auto bin = static_cast<std::int64_t>(std::clamp(position, 0.0, bins - 1.0));
        // Guard the computed bin against rounding: the edges are the truth.
        while (bin > 0 && x < h.edges[static_cast<std::size_t>(bin)]) --bin;
        while (bin < bins - 1 && x >= h.edges[static_cast<std::size_t>(bin) + 1]) ++bin;
        ++h.counts[static_cast<std::size_t>(bin)];
      }
    }
  });
  return h;
}

Histogram histogram_fixed(TensorView view, int bins) {
  const Stats s = compute_stats(view);
  if (s.finite() == 0) {
    Histogram h = histogram_fixed(view, bins, 0.0, 0.0);
    h.edges.assign(h.edges.size(), std::nan(""));
    return h;
  }
  return histogram_fixed(view, bins, s.min, s.max);
}

Log2Histogram histogram_log2(TensorView view) {
  Log2Histogram h;
  // frexp exponents of doubles span [-1073, 1024]; count densely, then trim.
  constexpr int kMinExp = -1080;
  constexpr int kMaxExp = 1030;
  std::vector<std::int64_t> dense(static_cast<std::size_t>(kMaxExp - kMinExp + 1), 0);
  detail::visit_values(view, [&](std::span<const double> values) {
    for (double x : values) {
      if (!count_nonfinite(x, h.nan, h.pos_inf, h.neg_inf)) continue;
      if (x == 0) {
        ++h.zero;
        continue;
      }
      const int e = std::ilogb(x);  // 2^e <= |x| < 2^(e+1), exact also for subnormals
      ++dense[static_cast<std::size_t>(e - kMinExp)];
    }
  });
  std::size_t first = 0;
  while (first < dense.size() && dense[first] == 0) ++first;
  if (first == dense.size()) return h;
  std::size_t last = dense.size() - 1;
  while (dense[last] == 0) --last;
  h.min_exponent = static_cast<int>(first) + kMinExp;
  h.counts.assign(dense.begin() + static_cast<std::ptrdiff_t>(first),
                  dense.begin() + static_cast<std::ptrdiff_t>(last) + 1);
  return h;
}

const std::vector<double>& tensorflow_bucket_limits() {
  static const std::vector<double> kLimits = [] {
    std::vector<double> positive;
    for (double v = 1e-12; v < 1e20; v *= 1.1) positive.push_back(v);
    positive.push_back(DBL_MAX);
    std::vector<double> all;
    all.reserve(positive.size() * 2 + 1);
    for (auto it = positive.rbegin(); it != positive.rend(); ++it) all.push_back(-*it);
    all.push_back(0.0);
    all.insert(all.end(), positive.begin(), positive.end());
    return all;
  }();
  return kLimits;
}

Histogram histogram_tensorflow(TensorView view) {
  Histogram h;
  h.edges = tensorflow_bucket_limits();
  h.counts.assign(h.edges.size(), 0);
  detail::visit_values(view, [&](std::span<const double> values) {
    for (double x : values) {
      if (!count_nonfinite(x, h.nan, h.pos_inf, h.neg_inf)) continue;
      // First limit > x. x == DBL_MAX would fall past the end; TF clamps to the last bucket.
      auto it = std::upper_bound(h.edges.begin(), h.edges.end(), x);
      if (it == h.edges.end()) --it;
      ++h.counts[static_cast<std::size_t>(it - h.edges.begin())];
    }
  });
  return h;
}

}  // namespace tfdebug
