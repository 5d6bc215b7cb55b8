// What-if analysis: a linear model's partial dependence has slope w_j; a linear classifier's
// sweep flips at the analytic crossing; ICE of a model with an interaction differs across rows
// while the partial dependence is their mean.
#include "tfdebug/robust/what_if.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "robust_test_models.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::robust {
namespace {

using testing::FunctionModel;

const std::vector<float> kRows = {0.1f,  0.5f, -1.0f, 0.7f, -0.3f, 2.0f,
                                  -0.4f, 1.2f, 0.0f,  1.5f, 0.9f,  -0.6f};  // 4 x 3

TEST(PartialDependence, LinearModelHasSlopeW) {
  const std::vector<double> w = {0.5, -2.0, 3.0};
  FunctionModel model = testing::linear_classifier(w, 0.25);
  for (std::int64_t j = 0; j < 3; ++j) {
    const std::vector<double> grid = {-1, -0.5, 0, 1, 2.5};
    const PartialDependence pd = partial_dependence(model, kRows, {j}, {grid}, 1, 3);
    ASSERT_EQ(pd.average.size(), grid.size());
    for (std::size_t g = 1; g < grid.size(); ++g)
      EXPECT_NEAR((pd.average[g] - pd.average[g - 1]) / (grid[g] - grid[g - 1]),
                  w[static_cast<std::size_t>(j)], 1e-5);
    EXPECT_EQ(pd.evaluations, 4 * 5);
  }
}

TEST(PartialDependence, IceDiffersAcrossRowsWithAnInteractionAndAveragesToThePdp) {
  // f = x0 * x1 + x2: the slope in x0 is x1, each row's own.
  FunctionModel model(
      3, 1, [](const std::vector<double>& x) { return std::vector<double>{x[0] * x[1] + x[2]}; },
      [](const std::vector<double>& x, std::int64_t) {
        return std::vector<double>{x[1], x[0], 1};
      });
  const std::vector<double> grid = {0, 1, 2};
  const PartialDependence pd = partial_dependence(model, kRows, {0}, {grid}, 0);
  ASSERT_EQ(pd.ice.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    const double x1 = kRows[i * 3 + 1], x2 = kRows[i * 3 + 2];
    for (std::size_t g = 0; g < 3; ++g) EXPECT_NEAR(pd.ice[i][g], grid[g] * x1 + x2, 1e-5);
  }
  EXPECT_NE(pd.ice[0][2] - pd.ice[0][0], pd.ice[1][2] - pd.ice[1][0]);
  for (std::size_t g = 0; g < 3; ++g) {
    double mean = 0;
    for (const auto& curve : pd.ice) mean += curve[g] / 4;
    EXPECT_NEAR(pd.average[g], mean, 1e-12);
  }
  // 2-D: average(a, b) = a * b + mean(x2).
  const std::vector<double> ga = {-1, 2}, gb = {0.5, 1, 3};
  const PartialDependence pd2 = partial_dependence(model, kRows, {0, 1}, {ga, gb}, 0);
  const double mean_x2 = (-1.0 + 2.0 + 0.0 - 0.6) / 4;
  ASSERT_EQ(pd2.average.size(), 6u);
  for (std::size_t a = 0; a < 2; ++a)
    for (std::size_t b = 0; b < 3; ++b) EXPECT_NEAR(pd2.average[a * 3 + b], ga[a] * gb[b] + mean_x2, 1e-5);
}

TEST(FeatureSweep, FlipIsAtTheAnalyticCrossing) {
  const std::vector<double> w = {0.5, -2.0, 3.0};
  const double b = 0.25;
  FunctionModel model = testing::linear_classifier(w, b);
  const std::vector<float> x = {0.1f, 0.5f, -1.0f};
  // Feature 2 crosses where b + 0.5 x0 - 2 x1 + 3 v = 0.
  const double crossing = -(b + 0.5 * double(0.1f) - 2.0 * 0.5) / 3.0;
  std::vector<double> grid;
  for (int g = 0; g <= 10; ++g) grid.push_back(-1 + 0.2 * g);
  const FeatureSweep s = sweep_feature(model, x, 2, grid);
  ASSERT_EQ(s.flips.size(), 1u);
  EXPECT_NEAR(s.flips[0].at, crossing, 1e-6);
  EXPECT_EQ(s.flips[0].from, 0);
  EXPECT_EQ(s.flips[0].to, 1);
  EXPECT_EQ(s.predicted.front(), 0);
  EXPECT_EQ(s.predicted.back(), 1);
}

TEST(ScenarioTable, ChangedFeaturesGiveTheModelsOutputs) {
  FunctionModel model = testing::linear_classifier({1.0, 2.0}, 0.0);
  const std::vector<float> x = {1.0f, -1.0f};  // f = -1
  const auto table = scenario_table(model, x, {{"raise x1", {{1, 1.0f}}}, {"both", {{0, 0.0f}, {1, 0.0f}}}});
  ASSERT_EQ(table.size(), 3u);
  EXPECT_EQ(table[0].name, "as is");
  EXPECT_EQ(table[0].predicted, 0);
  EXPECT_FLOAT_EQ(table[1].outputs[1], 3.0f);
  EXPECT_EQ(table[1].predicted, 1);
  EXPECT_DOUBLE_EQ(table[1].change[1], 4.0);
  EXPECT_FLOAT_EQ(table[2].outputs[1], 0.0f);
}

TEST(FeatureGrid, SpansTheFifthToNinetyFifthPercentile) {
  std::vector<float> rows;
  for (int i = 0; i <= 100; ++i) rows.push_back(static_cast<float>(i));
  const auto grid = feature_grid(rows, 1, 0, 10);
  ASSERT_EQ(grid.size(), 10u);
  EXPECT_DOUBLE_EQ(grid.front(), 5);
  EXPECT_DOUBLE_EQ(grid.back(), 95);
  EXPECT_THROW(feature_grid(rows, 1, 1, 10), Error);
}

}  // namespace
}  // namespace tfdebug::robust
