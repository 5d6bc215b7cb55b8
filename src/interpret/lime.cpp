#include "tfdebug/interpret/lime.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include "batching.hpp"
#include "random.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/normal.hpp"
#include "weighted_ridge.hpp"

namespace tfdebug::interpret {
using detail::RidgeFit;
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
  std::vector<double> cdf_low, cdf_high;  // the normal CDF at each bin's standardised min and max
  int of(double v) const {                // numpy.searchsorted(boundaries, v), side "left"
    return static_cast<int>(std::lower_bound(boundaries.begin(), boundaries.end(), v) - boundaries.begin());
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
  for (std::size_t k = 0; k < count; ++k) {
    bins.cdf_low.push_back(normal_cdf((bins.min[k] - bins.mean[k]) / bins.stdev[k]));
    bins.cdf_high.push_back(normal_cdf((bins.max[k] - bins.mean[k]) / bins.stdev[k]));
  }
  return bins;
}

// A value of bin `k`: a normal of the bin's mean and std truncated to its [min, max], drawn by
// inverting the CDF; the bin's one value when min == max (upstream returns the standardised
// value there, which is not a value of the feature).
double draw_in_bin(const Bins& bins, std::size_t k, detail::Stream& stream) {
  const double lo = (bins.min[k] - bins.mean[k]) / bins.stdev[k];
  const double hi = (bins.max[k] - bins.mean[k]) / bins.stdev[k];
  if (lo == hi) return bins.min[k];
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

  // Sample s (from stream s; sample 0 is x): its interpretable row and its model input.
  const auto n = static_cast<std::size_t>(options.samples);
  std::vector<double> data(n * static_cast<std::size_t>(m));
  std::vector<double> outputs(n);
  detail::Batcher batcher(model, options.max_batch);
  batcher.forward(
      options.samples,
      [&](std::int64_t s, std::span<float> row) {
        double* z = data.data() + static_cast<std::size_t>(s * m);
        detail::Stream stream(options.seed, static_cast<std::uint64_t>(s));
        for (std::int64_t j = 0; j < m; ++j) {
          const auto jj = static_cast<std::size_t>(j);
          if (s == 0) {
            row[jj] = x[jj];
            z[j] = options.discretize ? 1 : (x[jj] - mean[jj]) / scale[jj];
            continue;
          }
          if (options.discretize) {
            const Bins& b = bins[jj];
            // A bin by the training frequencies.
            double u = stream.uniform();
            std::size_t k = 0;
            while (k + 1 < b.frequency.size() && u >= b.frequency[k]) u -= b.frequency[k++];
            z[j] = static_cast<int>(k) == x_bin[jj] ? 1 : 0;
            row[jj] = static_cast<float>(draw_in_bin(b, k, stream));
          } else {
            const double v = stream.normal() * scale[jj] + mean[jj];
            row[jj] = static_cast<float>(v);
            z[j] = (v - mean[jj]) / scale[jj];
          }
        }
      },
      [&](std::int64_t s, std::span<const float> out) {
        outputs[static_cast<std::size_t>(s)] = out[static_cast<std::size_t>(target)];
      });

  // The kernel on the distance to sample 0 in the interpretable space.
  const double width =
      options.kernel_width > 0 ? options.kernel_width : 0.75 * std::sqrt(static_cast<double>(m));
  std::vector<double> weights(n);
  for (std::size_t s = 0; s < n; ++s) {
    double d2 = 0;
    for (std::int64_t j = 0; j < m; ++j) {
      const double d = data[s * static_cast<std::size_t>(m) + static_cast<std::size_t>(j)] -
                       data[static_cast<std::size_t>(j)];
      d2 += d * d;
    }
    weights[s] = std::exp(-d2 / (2 * width * width));
  }

  const RidgeFit fit =
      detail::weighted_ridge(data, static_cast<std::size_t>(m), outputs, weights, options.alpha);
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
