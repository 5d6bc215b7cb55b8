// libFuzzer: histograms and quantiles on arbitrary f64 data keep their invariants: every
// element is accounted for exactly once, and the sketch stays within its relative-error bound.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tfdebug/core/histogram.hpp"
#include "tfdebug/core/quantile.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const int bins = 1 + data[0] % 64;
  std::vector<double> values((size - 1) / 8);
  if (!values.empty()) std::memcpy(values.data(), data + 1, values.size() * 8);
  const tfdebug::TensorView view(values.data(), tfdebug::DType::f64,
                                 {static_cast<std::int64_t>(values.size())});
  const auto n = static_cast<std::int64_t>(values.size());

  if (tfdebug::histogram_fixed(view, bins).total() != n) std::abort();
  if (tfdebug::histogram_tensorflow(view).total() != n) std::abort();
  const tfdebug::Log2Histogram log2 = tfdebug::histogram_log2(view);
  std::int64_t total = log2.zero + log2.nan + log2.pos_inf + log2.neg_inf;
  for (std::int64_t c : log2.counts) total += c;
  if (total != n) std::abort();

  std::vector<double> finite;
  for (double x : values) {
    if (std::isfinite(x)) finite.push_back(x);
  }
  if (finite.empty()) return 0;
  std::sort(finite.begin(), finite.end());
  tfdebug::QuantileSketch sketch;
  sketch.add(view);
  for (double p : {0.0, 0.1, 0.5, 0.9, 1.0}) {
    const auto k = static_cast<std::size_t>(std::floor(p * static_cast<double>(finite.size() - 1)));
    const double exact = finite[k];
    if (std::fabs(exact) >= 2.2250738585072014e-308 &&
        !(std::fabs(sketch.quantile(p) - exact) <= sketch.relative_accuracy() * std::fabs(exact))) {
      std::abort();
    }
  }
  return 0;
}
