// Tabular LIME's quartile bins and the draw of whole neighbourhood rows from them (lime.cpp).
//
// Note [Rows of bin draws]: a sample draws, for every feature, a bin by the training bins'
// frequencies and a value of that bin (a normal of the bin's training mean and std truncated to
// its [min, max]). Both come from ONE 64-bit word of the sample's stream (Note [Seeded streams];
// word j is the stream's (j + 1)-th SplitMix64 output, so a row's words are independent and made
// side by side): its top 32 bits choose the bin (compared with the cumulative frequencies scaled
// to 2^32), its low 32 bits are the uniform u of the inverse transform z = Phi^-1(Phi(lo) +
// u (Phi(hi) - Phi(lo))), clamped to [lo, hi]. Phi^-1 is Acklam's rational approximation where
// p is in [0.02425, 0.97575] (relative error under 1.2e-9, below the float the value is stored
// as); outside it (Phi's tails, which need a log) the lane is flagged and inverted afterwards by
// tfdebug::normal_quantile. The loop over a row's features has no branch that depends on the draw
// (bins are selected by compares, every bin's parameters loaded), so the compiler vectorises it:
// bin_rows.hpp compiles it for AVX-512, AVX2 and the baseline and picks one at run time, the
// same values from each (integer work and IEEE double arithmetic without fused multiply-adds).
// It replaced a bin uniform, a ziggurat normal and a rejection test per value, ~2.1 SplitMix64
// steps and two mispredictable branches (docs/performance.md).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace tfdebug::interpret::detail {

class QuartileBins {
 public:
  // training: rows x features, row-major. concurrent: half the columns on a second thread when
  // there are enough values (Note [Quartiles on two threads]); the same bins either way.
  QuartileBins(std::span<const float> training, std::size_t rows, std::size_t features,
               bool concurrent = false);

  std::size_t features() const { return m_; }
  // The bin of value v of feature j (numpy.searchsorted(boundaries, v), side "left").
  int bin_of(std::size_t j, double v) const;

  // Sample `sample`'s model input `row` (m values) drawn from stream (seed, sample); bit j % 64 of
  // bits[j / 64] set where feature j's bin is x_bins[j] (bits: (m + 63) / 64 words, overwritten);
  // returns how many are.
  std::size_t draw(std::uint64_t seed, std::uint64_t sample, std::span<const std::int32_t> x_bins,
                   std::span<float> row, std::span<std::uint64_t> bits) const;

 private:
  static constexpr std::size_t kBins = 4;                 // quartiles; fewer where boundaries coincide
  static constexpr std::size_t kConcurrentValues = 4096;  // training values worth a second thread
  void fit_columns(std::span<const float> training, std::size_t rows, std::size_t begin, std::size_t end);
  std::size_t m_ = 0;
  std::vector<std::vector<double>> boundaries_;  // per feature
  // Per bin k, per feature j (structure of arrays, so a row's loop reads them contiguously):
  // threshold_[k]: the cumulative frequency of bins 0..k times 2^32 (2^32, never passed, past the
  // last bin); the bin's truncated normal: Phi(lo), Phi(hi) - Phi(lo), lo, hi, mean, std (a bin of
  // one value: mean = that value, std = lo = hi = 0).
  std::array<std::vector<std::uint64_t>, kBins - 1> threshold_;
  std::array<std::vector<double>, kBins> cdf_low_, cdf_width_, lo_, hi_, mean_, stdev_;
};

}  // namespace tfdebug::interpret::detail
