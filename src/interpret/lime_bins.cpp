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

// The uniform of a word's low 32 bits, in (0, 1), as the row loop makes it.
double low_uniform(std::uint64_t w) {
  return std::bit_cast<double>(0x3FF0000000000000ULL | ((w & 0xffffffffULL) << 20)) - 1.0 + 0x1.0p-33;
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
      if (count[k] == 0) continue;  // never drawn: its frequency is 0
      if (min[k] == max[k]) {       // a bin of one value: that value (std, lo, hi stay 0)
        mean_[k][j] = min[k];
        continue;
      }
      const double sd = std::sqrt(var[k] / static_cast<double>(count[k])) + 1e-11;  // upstream's guard
      mean_[k][j] = mean[k];
      stdev_[k][j] = sd;
      lo_[k][j] = (min[k] - mean[k]) / sd;
      hi_[k][j] = (max[k] - mean[k]) / sd;
      cdf_low_[k][j] = normal_cdf(lo_[k][j]);
      cdf_width_[k][j] = normal_cdf(hi_[k][j]) - cdf_low_[k][j];
    }
  }
}

int QuartileBins::bin_of(std::size_t j, double v) const {
  const std::vector<double>& b = boundaries_[j];
  return static_cast<int>(std::lower_bound(b.begin(), b.end(), v) - b.begin());
}

std::size_t QuartileBins::draw(std::uint64_t seed, std::uint64_t sample, std::span<const std::int32_t> x_bins,
                               std::span<float> row, std::span<std::uint64_t> bits) const {
  static const BinBlock kBlock = bin_block_for_cpu();
  BinArrays a{};
  for (std::size_t k = 0; k < kBins; ++k) {
    if (k + 1 < kBins) a.threshold[k] = threshold_[k].data();
    a.cdf_low[k] = cdf_low_[k].data();
    a.cdf_width[k] = cdf_width_[k].data();
    a.lo[k] = lo_[k].data();
    a.hi[k] = hi_[k].data();
    a.mean[k] = mean_[k].data();
    a.stdev[k] = stdev_[k].data();
  }
  a.x_bins = x_bins.data();
  const std::uint64_t start = Stream::start(seed, sample);
  std::size_t count = 0;
  for (std::size_t begin = 0; begin < m_; begin += 64) {
    const std::size_t end = std::min(m_, begin + 64);
    std::uint64_t exact = 0;
    const std::uint64_t ones = kBlock(a, start, begin, end, row.data() + begin, &exact);
    bits[begin / 64] = ones;
    count += static_cast<std::size_t>(std::popcount(ones));
    for (; exact != 0; exact &= exact - 1) {  // rare: the tails of Phi, inverted here
      const std::size_t j = begin + static_cast<std::size_t>(std::countr_zero(exact));
      const std::uint64_t w = Stream::mix(start + (j + 1) * Stream::kGamma);
      const std::uint64_t top = w >> 32;
      const auto k = static_cast<std::size_t>(top >= threshold_[0][j]) +
                     static_cast<std::size_t>(top >= threshold_[1][j]) +
                     static_cast<std::size_t>(top >= threshold_[2][j]);
      const double p = cdf_low_[k][j] + low_uniform(w) * cdf_width_[k][j];
      const double z = std::clamp(normal_quantile(p, true), lo_[k][j], hi_[k][j]);
      row[j] = static_cast<float>(mean_[k][j] + stdev_[k][j] * z);
    }
  }
  return count;
}

}  // namespace tfdebug::interpret::detail
