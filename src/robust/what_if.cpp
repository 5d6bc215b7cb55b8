#include "tfdebug/robust/what_if.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "classes.hpp"
#include "interpret/batching.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::robust {
namespace {

void check_feature(std::int64_t feature, std::int64_t numel) {
  if (feature < 0 || feature >= numel) {
    throw Error("feature " + std::to_string(feature) + " is not an input element (the model takes " +
                std::to_string(numel) + ": 0.." + std::to_string(numel - 1) + ")");
  }
}

void check_grid(const std::vector<double>& grid) {
  if (grid.empty()) throw Error("what-if: a grid needs at least one value");
  for (const double v : grid)
    if (!std::isfinite(v)) throw Error("what-if: grid values must be finite");
}

// The q-quantile of sorted values, linear interpolation (numpy's default).
double quantile(const std::vector<double>& sorted, double q) {
  const double at = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(at));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (at - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

}  // namespace

std::vector<double> feature_grid(std::span<const float> rows, std::int64_t numel, std::int64_t feature,
                                 std::int64_t points) {
  const std::int64_t n = interpret::detail::row_count(rows, numel, "the rows", true);
  check_feature(feature, numel);
  if (points < 1) throw Error("what-if: a grid needs at least one point");
  std::vector<double> values;
  for (std::int64_t i = 0; i < n; ++i) values.push_back(rows[static_cast<std::size_t>(i * numel + feature)]);
  std::sort(values.begin(), values.end());
  double lo = quantile(values, 0.05), hi = quantile(values, 0.95);
  if (!(hi > lo)) {
    lo = values.front();
    hi = values.back();
  }
  std::vector<double> grid;
  if (points == 1 || !(hi > lo)) return {lo};
  for (std::int64_t g = 0; g < points; ++g)
    grid.push_back(lo + (hi - lo) * static_cast<double>(g) / static_cast<double>(points - 1));
  return grid;
}

PartialDependence partial_dependence(interpret::ForwardModel& model, std::span<const float> rows,
                                     const std::vector<std::int64_t>& features,
                                     const std::vector<std::vector<double>>& grids, std::int64_t output,
                                     std::int64_t max_batch) {
  const std::int64_t numel = interpret::example_size(model);
  const std::int64_t n = interpret::detail::row_count(rows, numel, "the rows", true);
  if (features.empty() || features.size() > 2 || grids.size() != features.size())
    throw Error("partial dependence: one or two features, with one grid each");
  for (const std::int64_t f : features) check_feature(f, numel);
  for (const auto& g : grids) check_grid(g);
  if (output < 0 || output >= model.output_size())
    throw Error("output " + std::to_string(output) + " is not an output of the model (it has " +
                std::to_string(model.output_size()) + ")");
  PartialDependence pd{features, grids, output, {}, {}, 0};
  const std::size_t g1 = grids.size() > 1 ? grids[1].size() : 1;
  const std::size_t cells = grids[0].size() * g1;
  pd.ice.assign(static_cast<std::size_t>(n), std::vector<double>(cells));
  interpret::detail::Batcher batcher(model, max_batch);
  const auto total = static_cast<std::int64_t>(cells) * n;
  batcher.forward(
      total,
      [&](std::int64_t k, std::span<float> point) {
        const std::int64_t i = k / static_cast<std::int64_t>(cells);
        const auto cell = static_cast<std::size_t>(k % static_cast<std::int64_t>(cells));
        std::copy_n(rows.begin() + i * numel, numel, point.begin());
        point[static_cast<std::size_t>(features[0])] = static_cast<float>(grids[0][cell / g1]);
        if (features.size() > 1)
          point[static_cast<std::size_t>(features[1])] = static_cast<float>(grids[1][cell % g1]);
      },
      [&](std::int64_t k, std::span<const float> out) {
        pd.ice[static_cast<std::size_t>(k) / cells][static_cast<std::size_t>(k) % cells] =
            out[static_cast<std::size_t>(output)];
      });
  pd.average.assign(cells, 0.0);
  for (const auto& curve : pd.ice)
    for (std::size_t c = 0; c < cells; ++c) pd.average[c] += curve[c] / static_cast<double>(n);
  pd.evaluations = batcher.evaluations();
  return pd;
}

FeatureSweep sweep_feature(interpret::ForwardModel& model, std::span<const float> x, std::int64_t feature,
                           const std::vector<double>& grid, std::int64_t refinements,
                           std::int64_t max_batch) {
  const std::int64_t numel = interpret::example_size(model);
  interpret::detail::check_example(model, x, 0);
  check_feature(feature, numel);
  check_grid(grid);
  for (std::size_t g = 1; g < grid.size(); ++g)
    if (!(grid[g] > grid[g - 1])) throw Error("feature sweep: grid values must increase");
  FeatureSweep s;
  s.feature = feature;
  s.grid = grid;
  interpret::detail::Batcher batcher(model, max_batch);
  const auto at = [&](std::span<float> point, double value) {
    std::copy(x.begin(), x.end(), point.begin());
    point[static_cast<std::size_t>(feature)] = static_cast<float>(value);
  };
  batcher.forward(
      static_cast<std::int64_t>(grid.size()),
      [&](std::int64_t g, std::span<float> point) { at(point, grid[g]); },
      [&](std::int64_t, std::span<const float> out) {
        s.outputs.insert(s.outputs.end(), out.begin(), out.end());
        s.predicted.push_back(argmax(out));
      });
  for (std::size_t g = 1; g < grid.size(); ++g) {
    if (s.predicted[g] == s.predicted[g - 1]) continue;
    // Bisection keeps lo on the first class's side; the flip is the bracket's midpoint.
    double lo = grid[g - 1], hi = grid[g];
    for (std::int64_t step = 0; step < refinements; ++step) {
      const double mid = lo + (hi - lo) / 2;
      if (mid <= lo || mid >= hi) break;
      std::int64_t c = 0;
      batcher.forward(
          1, [&](std::int64_t, std::span<float> point) { at(point, mid); },
          [&](std::int64_t, std::span<const float> out) { c = argmax(out); });
      (c == s.predicted[g - 1] ? lo : hi) = mid;
    }
    s.flips.push_back({lo + (hi - lo) / 2, s.predicted[g - 1], s.predicted[g]});
  }
  s.evaluations = batcher.evaluations();
  return s;
}

std::vector<ScenarioRow> scenario_table(interpret::ForwardModel& model, std::span<const float> x,
                                        const std::vector<Scenario>& scenarios) {
  const std::int64_t numel = interpret::example_size(model);
  interpret::detail::check_example(model, x, 0);
  for (const auto& s : scenarios)
    for (const auto& [f, v] : s.changes) check_feature(f, numel);
  std::vector<ScenarioRow> table(scenarios.size() + 1);
  table[0].name = "as is";
  for (std::size_t k = 0; k < scenarios.size(); ++k) table[k + 1].name = scenarios[k].name;
  interpret::detail::Batcher batcher(model, 1000);
  batcher.forward(
      static_cast<std::int64_t>(table.size()),
      [&](std::int64_t k, std::span<float> point) {
        std::copy(x.begin(), x.end(), point.begin());
        if (k > 0)
          for (const auto& [f, v] : scenarios[static_cast<std::size_t>(k - 1)].changes)
            point[static_cast<std::size_t>(f)] = v;
      },
      [&](std::int64_t k, std::span<const float> out) {
        auto& row = table[static_cast<std::size_t>(k)];
        row.outputs.assign(out.begin(), out.end());
        row.predicted = argmax(out);
      });
  for (auto& row : table)
    for (std::size_t c = 0; c < row.outputs.size(); ++c)
      row.change.push_back(static_cast<double>(row.outputs[c]) - table[0].outputs[c]);
  return table;
}

}  // namespace tfdebug::robust
