#include "tfdebug/interpret/lime.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <numbers>
#include <string>

#include "batching.hpp"
#include "random.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/normal.hpp"
#include "weighted_ridge.hpp"

namespace tfdebug::interpret {
namespace {

// numpy.percentile's default (linear interpolation between order statistics) of sorted values.
double percentile(const std::vector<double>& sorted, double q) {
  const double at = q / 100 * static_cast<double>(sorted.size() - 1);
  const auto low = static_cast<std::size_t>(std::floor(at));
  const std::size_t high = std::min(low + 1, sorted.size() - 1);
  return sorted[low] + (at - static_cast<double>(low)) * (sorted[high] - sorted[low]);
}

// A feature's quartile bins from the training column: the boundaries (25th, 50th, 75th
// percentiles, duplicates dropped as upstream's np.unique does), and per bin the frequency in
// the training data, its values' min, max, mean and std (+1e-11, upstream's guard).
struct Bins {
  std::vector<double> boundaries;
  std::vector<double> frequency, min, max, mean, stdev;
  std::vector<double> lo, hi;             // each bin's min and max standardised by its mean and std
  std::vector<double> cdf_low, cdf_high;  // the normal CDF at lo and hi
  int of(double v) const {                // numpy.searchsorted(boundaries, v), side "left"
    return static_cast<int>(std::lower_bound(boundaries.begin(), boundaries.end(), v) - boundaries.begin());
  }
  // The cumulative frequencies of the first three bins, 2 (never reached) past the last but one.
  std::array<double, 3> cumulative{2, 2, 2};
  // A bin by the training frequencies: how many of the cumulative frequencies u passes. Counted
  // without branches, as the bin is random and a loop's exit is mispredicted nearly every time.
  std::size_t draw(detail::Stream& stream) const {
    const double u = stream.uniform();
    return static_cast<std::size_t>(u >= cumulative[0]) + static_cast<std::size_t>(u >= cumulative[1]) +
           static_cast<std::size_t>(u >= cumulative[2]);
  }
};

Bins quartile_bins(std::vector<double> column) {
  Bins bins;
  std::sort(column.begin(), column.end());
  for (const double q : {25.0, 50.0, 75.0}) {
    const double b = percentile(column, q);
    if (bins.boundaries.empty() || b != bins.boundaries.back()) bins.boundaries.push_back(b);
  }
  const std::size_t count = bins.boundaries.size() + 1;
  std::vector<std::vector<double>> members(count);
  for (const double v : column) members[static_cast<std::size_t>(bins.of(v))].push_back(v);
  for (const auto& m : members) {
    bins.frequency.push_back(static_cast<double>(m.size()) / static_cast<double>(column.size()));
    if (m.empty()) {
      bins.min.push_back(0), bins.max.push_back(0), bins.mean.push_back(0), bins.stdev.push_back(1e-11);
      continue;
    }
    double mean = 0;
    for (const double v : m) mean += v;
    mean /= static_cast<double>(m.size());
    double var = 0;
    for (const double v : m) var += (v - mean) * (v - mean);
    bins.min.push_back(m.front());
    bins.max.push_back(m.back());
    bins.mean.push_back(mean);
    bins.stdev.push_back(std::sqrt(var / static_cast<double>(m.size())) + 1e-11);
  }
  double sum = 0;
  for (std::size_t k = 0; k + 1 < count; ++k) bins.cumulative[k] = sum += bins.frequency[k];
  for (std::size_t k = 0; k < count; ++k) {
    bins.lo.push_back((bins.min[k] - bins.mean[k]) / bins.stdev[k]);
    bins.hi.push_back((bins.max[k] - bins.mean[k]) / bins.stdev[k]);
    bins.cdf_low.push_back(normal_cdf(bins.lo[k]));
    bins.cdf_high.push_back(normal_cdf(bins.hi[k]));
  }
  return bins;
}

// A value of bin `k`: a normal of the bin's mean and std truncated to its [min, max]; the bin's
// one value when min == max (upstream returns the standardised value there, which is not a value
// of the feature). Note [Truncated normals by rejection]: the bin's mean lies in [min, max] and
// its std is at most half the range (Popoviciu), so [lo, hi] holds 0 and is at least 2 wide: a
// standard normal falls in it with probability at least Phi(2) - 1/2 = 0.477, and rejection
// (ziggurat normals until one lands in [lo, hi]) takes under 2.1 draws on average where
// inverting the CDF cost a log and a rational function per value. After 64 misses (probability
// below 1e-18) the CDF is inverted instead, so a draw always ends.
double draw_in_bin(const Bins& bins, std::size_t k, detail::Stream& stream) {
  const double lo = bins.lo[k], hi = bins.hi[k];
  if (lo == hi) return bins.min[k];
  for (int tries = 0; tries < 64; ++tries) {
    const double z = stream.normal();
    if (z >= lo && z <= hi) return bins.mean[k] + bins.stdev[k] * z;
  }
  const double z =
      normal_quantile(bins.cdf_low[k] + stream.uniform() * (bins.cdf_high[k] - bins.cdf_low[k]), false);
  return bins.mean[k] + bins.stdev[k] * std::clamp(z, lo, hi);
}

}  // namespace

LimeAttribution lime_tabular(ForwardModel& model, std::span<const float> x, std::int64_t target,
                             const LimeOptions& options) {
  detail::check_example(model, x, target);
  const auto m = static_cast<std::int64_t>(x.size());
  const std::int64_t rows = detail::row_count(options.training, m, "the training data", true);
  if (options.samples < 2) throw Error("samples must be at least 2, got " + std::to_string(options.samples));
  if (!(options.alpha >= 0)) throw Error("alpha must be >= 0");
  const auto feature = [&](std::int64_t j) {
    std::vector<double> column(static_cast<std::size_t>(rows));
    for (std::int64_t r = 0; r < rows; ++r)
      column[static_cast<std::size_t>(r)] = options.training[static_cast<std::size_t>(r * m + j)];
    return column;
  };
  std::vector<Bins> bins;
  std::vector<double> mean(static_cast<std::size_t>(m)), scale(static_cast<std::size_t>(m));
  for (std::int64_t j = 0; j < m; ++j) {
    const std::vector<double> column = feature(j);
    double mu = 0;
    for (const double v : column) mu += v;
    mu /= static_cast<double>(rows);
    double var = 0;
    for (const double v : column) var += (v - mu) * (v - mu);
    mean[static_cast<std::size_t>(j)] = mu;
    const double sd = std::sqrt(var / static_cast<double>(rows));
    scale[static_cast<std::size_t>(j)] = sd > 0 ? sd : 1;  // sklearn's StandardScaler: 1 for a constant
    if (options.discretize) bins.push_back(quartile_bins(column));
  }
  std::vector<int> x_bin(static_cast<std::size_t>(m), 0);
  if (options.discretize)
    for (std::int64_t j = 0; j < m; ++j)
      x_bin[static_cast<std::size_t>(j)] =
          bins[static_cast<std::size_t>(j)].of(x[static_cast<std::size_t>(j)]);

  // The kernel on the distance to sample 0 in the interpretable space.
  const double width =
      options.kernel_width > 0 ? options.kernel_width : 0.75 * std::sqrt(static_cast<double>(m));
  const auto kernel = [&](double d2) { return std::exp(-d2 / (2 * width * width)); };

  // Sample s (from stream s; sample 0 is x): its interpretable row and its model input, made in
  // order, a batch at a time; its kernel weight as it is made.
  const auto n = static_cast<std::size_t>(options.samples);
  std::vector<double> outputs(n), weights(n);
  detail::Batcher batcher(model, options.max_batch);
  const auto output = [&](std::int64_t s, std::span<const float> out) {
    outputs[static_cast<std::size_t>(s)] = out[static_cast<std::size_t>(target)];
  };
  detail::RidgeFit fit;
  std::vector<double> data;
  if (options.discretize) {
    // The interpretable rows are 0/1 (1: the sample's bin is x's), kept as their ones; sample 0
    // is all ones, so a row's squared distance is its number of zeros: m + 1 kernel values.
    std::vector<double> by_zeros(static_cast<std::size_t>(m) + 1);
    for (std::size_t d = 0; d < by_zeros.size(); ++d) by_zeros[d] = kernel(static_cast<double>(d));
    // At most m ones a row, written unconditionally and counted when one (the test is a coin
    // flip per value, which a branch would mispredict half the time); the buffer is left
    // uninitialised, so only the pages the ones reach are touched.
    const auto mm = static_cast<std::size_t>(m);
    const std::unique_ptr<std::uint32_t[]> buffer(new std::uint32_t[n * mm]);
    detail::BinaryRows ones;
    ones.offsets.reserve(n + 1);
    std::size_t end = 0;  // buffer[0, end) holds the rows made so far
    batcher.forward(
        options.samples,
        [&](std::int64_t s, std::span<float> row) {
          // The Batcher makes points in order: row s's ones follow row s - 1's.
          std::uint32_t* out = buffer.get() + end;
          std::size_t count = 0;
          if (s == 0) {
            std::copy(x.begin(), x.end(), row.begin());
            for (std::size_t j = 0; j < mm; ++j) out[count++] = static_cast<std::uint32_t>(j);
          } else {
            detail::Stream stream(options.seed, static_cast<std::uint64_t>(s));
            for (std::size_t j = 0; j < mm; ++j) {
              const Bins& b = bins[j];
              const std::size_t k = b.draw(stream);
              out[count] = static_cast<std::uint32_t>(j);
              count += static_cast<std::size_t>(static_cast<int>(k) == x_bin[j]);
              row[j] = static_cast<float>(draw_in_bin(b, k, stream));
            }
          }
          end += count;
          ones.offsets.push_back(end);
          weights[static_cast<std::size_t>(s)] = by_zeros[mm - count];
        },
        output);
    ones.ones = std::span<const std::uint32_t>(buffer.get(), end);
    fit = detail::weighted_ridge(ones, static_cast<std::size_t>(m), outputs, weights, options.alpha);
    if (options.keep_neighbourhood) {
      data.assign(n * static_cast<std::size_t>(m), 0.0);
      for (std::size_t s = 0; s < n; ++s)
        for (const std::uint32_t j : ones.row(s)) data[s * static_cast<std::size_t>(m) + j] = 1;
    }
  } else {
    // Each feature N(0, 1) * its training std + its training mean; interpretable: standardised.
    data.resize(n * static_cast<std::size_t>(m));
    batcher.forward(
        options.samples,
        [&](std::int64_t s, std::span<float> row) {
          double* z = data.data() + static_cast<std::size_t>(s * m);
          detail::Stream stream(options.seed, static_cast<std::uint64_t>(s));
          for (std::int64_t j = 0; j < m; ++j) {
            const auto jj = static_cast<std::size_t>(j);
            const double v = s == 0 ? x[jj] : stream.normal() * scale[jj] + mean[jj];
            row[jj] = s == 0 ? x[jj] : static_cast<float>(v);
            z[j] = (v - mean[jj]) / scale[jj];
          }
        },
        output);
    for (std::size_t s = 0; s < n; ++s) {
      double d2 = 0;
      for (std::int64_t j = 0; j < m; ++j) {
        const double d = data[s * static_cast<std::size_t>(m) + static_cast<std::size_t>(j)] -
                         data[static_cast<std::size_t>(j)];
        d2 += d * d;
      }
      weights[s] = kernel(d2);
    }
    fit = detail::weighted_ridge(data, static_cast<std::size_t>(m), outputs, weights, options.alpha);
  }

  LimeAttribution a;
  a.method = "lime";
  a.shape = model.input_shape();
  a.values = fit.coefficients;
  a.intercept = fit.intercept;
  a.r2 = fit.r2;
  a.local_prediction = fit.local_prediction;
  a.output = outputs[0];
  a.evaluations = batcher.evaluations();
  if (options.keep_neighbourhood) {
    a.data = std::move(data);
    a.weights = std::move(weights);
    a.outputs = std::move(outputs);
  }
  return a;
}

}  // namespace tfdebug::interpret
