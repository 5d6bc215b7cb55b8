// What-if analysis (docs/robustness.md, "What-if"): partial dependence and ICE curves in one or
// two features, sweeps of one feature of one input with the values where the decision flips,
// and scenario tables (this input with these features changed -> these outputs).
//
//   const auto grid = tfdebug::robust::feature_grid(rows, model_numel, /*feature=*/2, 20);
//   const auto pd = tfdebug::robust::partial_dependence(model, rows, {2}, {grid}, /*output=*/1);
//   // pd.average[g]: the mean of output 1 over the rows with feature 2 set to grid[g]
//   const auto s = tfdebug::robust::sweep_feature(model, x, 2, grid);
//   for (const auto& f : s.flips) std::printf("%lld -> %lld at %g\n", f.from, f.to, f.at);
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tfdebug/interpret/model.hpp"

namespace tfdebug::robust {

// `points` values of `feature` evenly spaced between its 5th and 95th percentiles over the rows
// (scikit-learn's partial_dependence range), or its min and max when that range is empty.
std::vector<double> feature_grid(std::span<const float> rows, std::int64_t numel, std::int64_t feature,
                                 std::int64_t points);

struct PartialDependence {
  std::vector<std::int64_t> features;      // one or two flat element indices
  std::vector<std::vector<double>> grids;  // one grid per feature
  std::int64_t output = 0;
  // average[g] for 1-D; average[g0 * grids[1].size() + g1] for 2-D: the mean over the rows of the
  // output with the features set to the grid values.
  std::vector<double> average;
  // ice[i] (same layout as average): row i's own curve or surface.
  std::vector<std::vector<double>> ice;
  std::int64_t evaluations = 0;
};

// Partial dependence and ICE of `output` in one or two features over the rows.
PartialDependence partial_dependence(interpret::ForwardModel& model, std::span<const float> rows,
                                     const std::vector<std::int64_t>& features,
                                     const std::vector<std::vector<double>>& grids, std::int64_t output,
                                     std::int64_t max_batch = 1000);

struct DecisionFlip {
  double at = 0;                  // the feature's value where the top class changes (bisected)
  std::int64_t from = 0, to = 0;  // top class below and above `at`
};

struct FeatureSweep {
  std::int64_t feature = 0;
  std::vector<double> grid;
  std::vector<float> outputs;           // grid.size() x classes
  std::vector<std::int64_t> predicted;  // top class at each grid value
  std::vector<DecisionFlip> flips;      // one per change of the top class between grid values
  std::int64_t evaluations = 0;
};

// x with `feature` set to each grid value (increasing); where the top class changes between two
// values, the change is located by `refinements` bisection steps between them.
FeatureSweep sweep_feature(interpret::ForwardModel& model, std::span<const float> x, std::int64_t feature,
                           const std::vector<double>& grid, std::int64_t refinements = 40,
                           std::int64_t max_batch = 1000);

struct Scenario {
  std::string name;
  std::vector<std::pair<std::int64_t, float>> changes;  // (feature, new value)
};

struct ScenarioRow {
  std::string name;
  std::vector<float> outputs;
  std::int64_t predicted = 0;
  std::vector<double> change;  // outputs minus the unchanged input's
};

// The unchanged input first (named "as is"), then each scenario.
std::vector<ScenarioRow> scenario_table(interpret::ForwardModel& model, std::span<const float> x,
                                        const std::vector<Scenario>& scenarios);

}  // namespace tfdebug::robust
