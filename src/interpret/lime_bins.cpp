#include "lime_bins.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <exception>
#include <limits>
#include <thread>

#include "bin_rows.hpp"
#include "random.hpp"
#include "tfdebug/core/normal.hpp"

namespace tfdebug::interpret::detail {
namespace {

// The uniform of a word's low 23 bits, in (0, 1), as the vectorised loop makes it (exact in
// float and in double): (2 (w mod 2^23) + 1) / 2^24.
double low_uniform23(std::uint64_t w) {
  return static_cast<double>(2 * (w & 0x7FFFFFU) + 1) * 0x1.0p-24;
}

// a[i] bit j <- a[j] bit i: the 64 x 64 bit matrix transposed in place (6 rounds of swapping
// blocks of 32, 16, ..., 1 bits between rows k and k | j).
void transpose64(std::uint64_t* a) {
  std::uint64_t mask = 0x00000000FFFFFFFFULL;
  for (unsigned j = 32; j != 0; j >>= 1, mask ^= mask << j) {
    for (unsigned k = 0; k < 64; k = ((k | j) + 1) & ~j) {
      const std::uint64_t t = ((a[k] >> j) ^ a[k | j]) & mask;
      a[k] ^= t << j;
      a[k | j] ^= t;
    }
  }
}

}  // namespace

QuartileBins::QuartileBins(std::span<const float> training, std::size_t rows, std::size_t features,
                           bool concurrent)
    : m_(features), boundaries_(features) {
  for (auto& t : threshold_) t.assign(m_, std::uint64_t{1} << 32);
  for (std::size_t k = 0; k < kBins; ++k) {
    cdf_low_[k].assign(m_, 0.5);  // a bin of one value: p = 0.5, z = 0, its value
    cdf_width_[k].assign(m_, 0);
    lo_[k].assign(m_, 0);
    hi_[k].assign(m_, 0);
    mean_[k].assign(m_, 0);
    stdev_[k].assign(m_, 0);
    cdf_low_f_[k].assign(m_, 0.5f);
    cdf_width_f_[k].assign(m_, 0);
    mean_f_[k].assign(m_, 0);
    stdev_f_[k].assign(m_, 0);
    min_f_[k].assign(m_, 0);
    max_f_[k].assign(m_, 0);
  }
  // Note [Quartiles on two threads]: the columns are independent and each writes only its own
  // entries, so with `concurrent` a second thread takes the upper half of them when there is
  // enough to share (a thread's start and join, ~30-50 us, against ~4 us a column of 200 rows).
  // They sit before the first sample can be drawn, where nothing else runs beside them.
  const std::size_t half = concurrent && rows * features >= kConcurrentValues ? features / 2 : features;
  if (half == features) {
    fit_columns(training, rows, 0, features);
    return;
  }
  std::exception_ptr failure;
  {
    const std::jthread upper([&] {
      try {
        fit_columns(training, rows, half, features);
      } catch (...) {
        failure = std::current_exception();
      }
    });
    fit_columns(training, rows, 0, half);
  }
  if (failure) std::rethrow_exception(failure);
}

void QuartileBins::fit_columns(std::span<const float> training, std::size_t rows, std::size_t begin,
                               std::size_t end) {
  std::vector<double> column(rows);
  std::vector<std::uint8_t> bin(rows);
  for (std::size_t j = begin; j < end; ++j) {
    for (std::size_t r = 0; r < rows; ++r) column[r] = training[r * m_ + j];
    // The percentiles from order statistics by selection (nth_element, each on what is right of
    // the last one), not a sort: the bins need only the three boundaries.
    std::vector<double>& b = boundaries_[j];
    std::size_t from = 0;
    for (const double q : {25.0, 50.0, 75.0}) {
      // numpy.percentile's default: linear interpolation between order statistics low and low + 1.
      const double at = q / 100 * static_cast<double>(rows - 1);
      const auto low = static_cast<std::size_t>(std::floor(at));
      const auto nth = column.begin() + static_cast<std::ptrdiff_t>(low);
      std::nth_element(column.begin() + static_cast<std::ptrdiff_t>(from), nth, column.end());
      const double below = *nth;
      const double above = low + 1 < rows ? *std::min_element(nth + 1, column.end()) : below;
      const double v = below + (at - static_cast<double>(low)) * (above - below);
      if (b.empty() || v != b.back()) b.push_back(v);
      from = low;
    }
    // Each bin's count, min, max, mean (one pass), then its variance (a second).
    std::array<std::size_t, kBins> count{};
    std::array<double, kBins> sum{}, min{}, max{}, var{};
    min.fill(std::numeric_limits<double>::infinity());
    max.fill(-std::numeric_limits<double>::infinity());
    for (std::size_t r = 0; r < rows; ++r) {
      const double v = column[r];
      std::size_t k = 0;
      for (const double boundary : b) k += static_cast<std::size_t>(v > boundary);  // searchsorted, left
      bin[r] = static_cast<std::uint8_t>(k);
      ++count[k];
      sum[k] += v;
      min[k] = std::min(min[k], v);
      max[k] = std::max(max[k], v);
    }
    std::array<double, kBins> mean{};
    for (std::size_t k = 0; k < kBins; ++k)
      mean[k] = count[k] > 0 ? sum[k] / static_cast<double>(count[k]) : 0;
    for (std::size_t r = 0; r < rows; ++r)
      var[bin[r]] += (column[r] - mean[bin[r]]) * (column[r] - mean[bin[r]]);
    double cumulative = 0;
    for (std::size_t k = 0; k <= b.size(); ++k) {
      if (k < b.size()) {
        cumulative += static_cast<double>(count[k]) / static_cast<double>(rows);
        threshold_[k][j] = static_cast<std::uint64_t>(std::ldexp(cumulative, 32));
      }
      if (count[k] == 0) continue;                // never drawn: its frequency is 0
      min_f_[k][j] = static_cast<float>(min[k]);  // training values: floats, exact
      max_f_[k][j] = static_cast<float>(max[k]);
      if (min[k] == max[k]) {  // a bin of one value: that value (std, lo, hi stay 0)
        mean_[k][j] = min[k];
        mean_f_[k][j] = static_cast<float>(min[k]);
        continue;
      }
      const double sd = std::sqrt(var[k] / static_cast<double>(count[k])) + 1e-11;  // upstream's guard
      mean_[k][j] = mean[k];
      stdev_[k][j] = sd;
      lo_[k][j] = (min[k] - mean[k]) / sd;
      hi_[k][j] = (max[k] - mean[k]) / sd;
      cdf_low_[k][j] = normal_cdf(lo_[k][j]);
      cdf_width_[k][j] = normal_cdf(hi_[k][j]) - cdf_low_[k][j];
      cdf_low_f_[k][j] = static_cast<float>(cdf_low_[k][j]);
      cdf_width_f_[k][j] = static_cast<float>(cdf_width_[k][j]);
      mean_f_[k][j] = static_cast<float>(mean[k]);
      stdev_f_[k][j] = static_cast<float>(sd);
    }
  }
}

int QuartileBins::bin_of(std::size_t j, double v) const {
  const std::vector<double>& b = boundaries_[j];
  return static_cast<int>(std::lower_bound(b.begin(), b.end(), v) - b.begin());
}

void QuartileBins::draw(std::uint64_t seed, std::uint64_t first, std::size_t count,
                        std::span<const std::int32_t> x_bins, std::span<float> rows,
                        std::span<std::uint64_t> bits) const {
  static const BinColumns kColumns = bin_columns_for_cpu();
  BinArrays a{};
  for (std::size_t k = 0; k < kBins; ++k) {
    if (k + 1 < kBins) a.threshold[k] = threshold_[k].data();
    a.cdf_low[k] = cdf_low_f_[k].data();
    a.cdf_width[k] = cdf_width_f_[k].data();
    a.mean[k] = mean_f_[k].data();
    a.stdev[k] = stdev_f_[k].data();
    a.min[k] = min_f_[k].data();
    a.max[k] = max_f_[k].data();
  }
  a.x_bins = x_bins.data();
  const std::size_t words = (m_ + 63) / 64;
  alignas(64) float values[64 * 64];
  std::uint64_t starts[64], ones[64], outer[64];
  for (std::size_t block = 0; block < count; block += 64) {
    const std::size_t n = std::min<std::size_t>(64, count - block);
    for (std::size_t i = 0; i < 64; ++i) starts[i] = Stream::start(seed, first + block + std::min(i, n - 1));
    for (std::size_t begin = 0; begin < m_; begin += 64) {
      const std::size_t end = std::min(m_, begin + 64);
      kColumns(a, starts, begin, end, values, ones, outer);
      for (std::size_t i = 0; i < n; ++i) {
        float* row = rows.data() + (block + i) * m_;
        for (std::size_t j = begin; j < end; ++j) row[j] = values[(j - begin) * 64 + i];
      }
      for (std::size_t j = end - begin; j < 64; ++j) ones[j] = 0;
      transpose64(ones);
      for (std::size_t i = 0; i < n; ++i) bits[(block + i) * words + begin / 64] = ones[i];
      // Rare: the tails of Phi, inverted here.
      const std::uint64_t live = n == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1;
      for (std::size_t j = begin; j < end; ++j) {
        for (std::uint64_t e = outer[j - begin] & live; e != 0; e &= e - 1) {
          const auto i = static_cast<std::size_t>(std::countr_zero(e));
          const std::uint64_t w = Stream::mix(starts[i] + (j + 1) * Stream::kGamma);
          const std::uint64_t top = w >> 32;
          const auto k = static_cast<std::size_t>(top >= threshold_[0][j]) +
                         static_cast<std::size_t>(top >= threshold_[1][j]) +
                         static_cast<std::size_t>(top >= threshold_[2][j]);
          const double p = cdf_low_[k][j] + low_uniform23(w) * cdf_width_[k][j];
          const double v = mean_[k][j] + stdev_[k][j] * normal_quantile(p, true);
          rows[(block + i) * m_ + j] = std::clamp(static_cast<float>(v), min_f_[k][j], max_f_[k][j]);
        }
      }
    }
  }
}

}  // namespace tfdebug::interpret::detail
