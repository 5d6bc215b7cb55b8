#include "tfdebug/interpret/background_kmeans.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "batching.hpp"
#include "random.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::interpret {
namespace {

double distance2(const double* a, const float* b, std::size_t numel) {
  double d = 0;
  for (std::size_t j = 0; j < numel; ++j) {
    const double t = a[j] - b[j];
    d += t * t;
  }
  return d;
}

// k-means++ (Arthur and Vassilvitskii 2007): the first centre a uniform row, each next one a row
// drawn with probability proportional to its squared distance to the nearest centre so far. Stops
// early when every row sits on a centre (fewer distinct rows than k).
std::vector<double> plus_plus(std::span<const float> rows, std::size_t n, std::size_t numel, std::size_t k,
                              std::uint64_t seed) {
  detail::Stream stream(seed, 0);
  std::vector<double> centres;
  const auto add = [&](std::size_t r) {
    for (std::size_t j = 0; j < numel; ++j) centres.push_back(rows[r * numel + j]);
  };
  add(static_cast<std::size_t>(stream.below(n)));
  std::vector<double> nearest(n, std::numeric_limits<double>::infinity());
  while (centres.size() / numel < k) {
    const double* last = centres.data() + centres.size() - numel;
    double total = 0;
    for (std::size_t r = 0; r < n; ++r) {
      nearest[r] = std::min(nearest[r], distance2(last, rows.data() + r * numel, numel));
      total += nearest[r];
    }
    if (!(total > 0)) break;
    double u = stream.uniform() * total;
    std::size_t pick = n;
    for (std::size_t r = 0; r < n; ++r) {
      if (nearest[r] <= 0) continue;
      pick = r;  // the last row with weight, should rounding leave u over
      if (u < nearest[r]) break;
      u -= nearest[r];
    }
    add(pick);
  }
  return centres;
}

}  // namespace

BackgroundSummary kmeans_background(std::span<const float> rows, std::int64_t numel, std::int64_t k,
                                    std::uint64_t seed, int max_iterations) {
  if (numel < 1) throw Error("k-means: the rows need at least one value each");
  const std::int64_t count = detail::row_count(rows, numel, "the background", true);
  if (k < 1) throw Error("k-means: k must be at least 1, got " + std::to_string(k));
  if (max_iterations < 1) throw Error("k-means: max_iterations must be at least 1");
  for (const float v : rows)
    if (!std::isfinite(v)) throw Error("k-means: the background holds a non-finite value");
  const auto n = static_cast<std::size_t>(count);
  const auto m = static_cast<std::size_t>(numel);
  std::vector<double> centres = plus_plus(rows, n, m, std::min(static_cast<std::size_t>(k), n), seed);
  std::size_t clusters = centres.size() / m;

  BackgroundSummary s;
  s.rows = count;
  s.initial.assign(centres.begin(), centres.end());
  s.labels.assign(n, -1);
  std::vector<double> sums(clusters * m);
  std::vector<double> sizes(clusters);
  for (int it = 0; it < max_iterations; ++it) {
    // Assign each row to its nearest centre (the first on ties), then move each centre to its
    // rows' mean; a centre with no rows stays where it is.
    bool changed = false;
    std::fill(sums.begin(), sums.end(), 0.0);
    std::fill(sizes.begin(), sizes.end(), 0.0);
    for (std::size_t r = 0; r < n; ++r) {
      const float* row = rows.data() + r * m;
      std::size_t best = 0;
      double best_d = std::numeric_limits<double>::infinity();
      for (std::size_t c = 0; c < clusters; ++c) {
        const double d = distance2(centres.data() + c * m, row, m);
        if (d < best_d) best_d = d, best = c;
      }
      if (s.labels[r] != static_cast<std::int64_t>(best)) changed = true;
      s.labels[r] = static_cast<std::int64_t>(best);
      sizes[best] += 1;
      for (std::size_t j = 0; j < m; ++j) sums[best * m + j] += row[j];
    }
    s.iterations = it + 1;
    for (std::size_t c = 0; c < clusters; ++c)
      if (sizes[c] > 0)
        for (std::size_t j = 0; j < m; ++j) centres[c * m + j] = sums[c * m + j] / sizes[c];
    if (!changed) {
      s.converged = true;
      break;
    }
  }
  // The summary: the non-empty clusters, in order, and the rows' labels renumbered to match.
  std::vector<std::int64_t> renumber(clusters, -1);
  for (std::size_t c = 0; c < clusters; ++c) {
    if (sizes[c] == 0) continue;
    renumber[c] = static_cast<std::int64_t>(s.weights.size());
    s.weights.push_back(sizes[c]);
    for (std::size_t j = 0; j < m; ++j) s.centroids.push_back(static_cast<float>(centres[c * m + j]));
  }
  for (std::int64_t& label : s.labels) label = renumber[static_cast<std::size_t>(label)];
  return s;
}

}  // namespace tfdebug::interpret
