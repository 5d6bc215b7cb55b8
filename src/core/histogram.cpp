#include "tfdebug/core/histogram.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
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
  std::int64_t repeats = 1;  // Note [Broadcast views]: count each stored element once, then scale
  view = distinct_elements(view, repeats);
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
  if (repeats > 1) {
    for (std::int64_t* c : {&h.below, &h.above, &h.nan, &h.pos_inf, &h.neg_inf}) *c *= repeats;
    for (std::int64_t& c : h.counts) c *= repeats;
  }
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

// Note [TensorFlow bucket index]: the bucket of x is the first limit > x (upper_bound), clamped
// to the last. A binary search over the 1551 limits costs ~75 ns a value (11 unpredictable
// branches). The positive limits are 1e-12 * 1.1^k, ~7.3 to a power of two, so a table indexed
// by |x|'s exponent and top 4 mantissa bits (a sixteenth of a binade, narrower than a bucket)
// holds the bucket of the cell's lower end; a short walk over the limits themselves from there
// (at most two steps) makes the answer exactly upper_bound's. Checked against std::upper_bound
// in tests/core/histogram_test.cpp.
namespace {

constexpr std::size_t kZeroLimit = 775;  // limits[775] == 0; positive limit k at 776 + k
constexpr int kMinExponent = -41;        // 2^-41 < 1e-12
constexpr int kMaxExponent = 67;         // 2^67 > 1e20

struct BucketTable {
  std::vector<std::uint16_t> start;  // per cell: upper_bound index of the cell's lower end
  explicit BucketTable(const std::vector<double>& limits) {
    for (int e = kMinExponent; e <= kMaxExponent; ++e) {
      for (int sub = 0; sub < 16; ++sub) {
        const double low = std::ldexp(1.0 + sub / 16.0, e);
        start.push_back(
            static_cast<std::uint16_t>(std::upper_bound(limits.begin(), limits.end(), low) - limits.begin()));
      }
    }
  }
};

std::size_t tensorflow_bucket(const std::vector<double>& limits, const BucketTable& table, double x) {
  const std::size_t last = limits.size() - 1;
  const double magnitude = std::fabs(x);
  int exponent = 0;
  std::size_t i = last;
  std::uint64_t bits = 0;
  std::memcpy(&bits, &magnitude, sizeof bits);
  exponent = static_cast<int>((bits >> 52) & 0x7ff) - 1023;
  if (exponent < kMinExponent) {
    i = kZeroLimit + 1;  // |x| < 2^-41: next to 0
  } else if (exponent <= kMaxExponent) {
    i = table.start[static_cast<std::size_t>(exponent - kMinExponent) * 16 + ((bits >> 48) & 15)];
  }
  if (x < 0) i = std::min(last, 2 * kZeroLimit + 1 - i);  // the mirrored limit
  while (i > 0 && limits[i - 1] > x) --i;
  while (i < last && limits[i] <= x) ++i;
  return i;
}

}  // namespace

Histogram histogram_tensorflow(TensorView view) {
  Histogram h;
  h.edges = tensorflow_bucket_limits();
  h.counts.assign(h.edges.size(), 0);
  static const BucketTable kTable(tensorflow_bucket_limits());
  detail::visit_values(view, [&](std::span<const double> values) {
    for (double x : values) {
      if (!count_nonfinite(x, h.nan, h.pos_inf, h.neg_inf)) continue;
      ++h.counts[tensorflow_bucket(h.edges, kTable, x)];  // Note [TensorFlow bucket index]
    }
  });
  return h;
}

}  // namespace tfdebug
