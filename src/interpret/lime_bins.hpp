// Tabular LIME's quartile bins and the draw of whole neighbourhood rows from them (lime.cpp).
//
// Note [Rows of bin draws]: a sample draws, for every feature, a bin by the training bins'
// frequencies and a value of that bin (a normal of the bin's training mean and std truncated to
// its [min, max]). Both come from ONE 64-bit word of the sample's stream (Note [Seeded streams];
// word j is the stream's (j + 1)-th SplitMix64 output, so a row's words are independent and can
// be made in any order): its top 32 bits choose the bin (compared with the cumulative
// frequencies scaled to 2^32), its low 23 bits are the uniform u of the inverse transform
// z = Phi^-1(Phi(lo) + u (Phi(hi) - Phi(lo))), the value mean + std z clamped to the bin's
// [min, max]. Phi^-1 is Acklam's rational approximation, in float, where p is in [0.02425,
// 0.97575]; outside it (Phi's tails, which need a log) the value is flagged and inverted
// afterwards in double by tfdebug::normal_quantile.
//
// The samples are drawn 64 at a time, a feature at a time (column-major, bin_rows.hpp): one
// feature's parameters are the same for the 64 lanes, so they are broadcast rather than loaded
// and blended per lane, and the loop over the 64 samples has no branch that depends on the draw,
// so the compiler vectorises it (16 floats a vector on AVX-512). bin_rows.hpp compiles it for
// AVX-512, AVX2 and the baseline and picks one at run time, the same values from each (integer
// work and IEEE float arithmetic without fused multiply-adds). The 64 x 64 block is then
// transposed into the model's row-major inputs, and the 0/1 bits with a 64 x 64 bit transpose.
// Each value used to be drawn in double, a sample at a time, a feature per lane with every bin's
// parameters loaded and blended (1.15 ms for LIME's 5,000 x 64; docs/performance.md).
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

  // Samples first, first + 1, ..., first + count - 1, each from its stream (seed, sample): their
  // model inputs to rows (count x m, row-major) and their 0/1 rows to bits (count x (m + 63) / 64
  // words, overwritten): bit j % 64 of word j / 64 set where feature j's bin is x_bins[j].
  void draw(std::uint64_t seed, std::uint64_t first, std::size_t count, std::span<const std::int32_t> x_bins,
            std::span<float> rows, std::span<std::uint64_t> bits) const;

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
  // The same in float for the vectorised draw (bin_rows.hpp), with the bin's training min and max.
  std::array<std::vector<float>, kBins> cdf_low_f_, cdf_width_f_, mean_f_, stdev_f_, min_f_, max_f_;
};

}  // namespace tfdebug::interpret::detail
