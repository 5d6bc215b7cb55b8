// Edge cases: Mahalanobis distances against numpy (np.cov, np.linalg.inv, with and without
// shrinkage), the lowest-margin point of a linear model is the one closest to its hyperplane,
// gradient norms of a linear margin, neuron coverage of a known layer.
#include "tfdebug/robust/edge_cases.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "robust_test_models.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::robust {
namespace {

using testing::FunctionModel;

// 50 rows: [sin i, cos 1.3i + 0.5 sin i, (i mod 7) / 7], as float32 (numpy computed on the same).
std::vector<float> training_rows() {
  std::vector<float> rows;
  for (int i = 0; i < 50; ++i) {
    rows.push_back(static_cast<float>(std::sin(i)));
    rows.push_back(static_cast<float>(std::cos(1.3 * i) + 0.5 * std::sin(i)));
    rows.push_back(static_cast<float>((i % 7) / 7.0));
  }
  return rows;
}

TEST(Mahalanobis, MatchesNumpy) {
  const std::vector<float> rows = training_rows();
  const std::vector<float> a = {0.1f, 0.2f, 0.3f}, b = {2.0f, -1.0f, 0.5f};
  // S = (1 - l) C + l tr(C)/3 I; d = sqrt(v^T inv(S) v).
  const Mahalanobis plain(rows, 3, 0.0);
  EXPECT_NEAR(plain.distance(a), 0.4834995873023673, 1e-9);
  EXPECT_NEAR(plain.distance(b), 3.764734936463432, 1e-9);
  const Mahalanobis shrunk(rows, 3, 0.01);
  EXPECT_NEAR(shrunk.distance(a), 0.4770790039020006, 1e-9);
  EXPECT_NEAR(shrunk.distance(b), 3.762406696476976, 1e-9);
  const std::vector<float> same = {1, 2, 1, 2};
  EXPECT_THROW(Mahalanobis(same, 2, 0.0), Error);
}

TEST(EdgeCases, LowestMarginIsClosestToTheHyperplane) {
  const std::vector<double> w = {1.0, -2.0};
  FunctionModel model = testing::linear_classifier(w, 0.5);
  std::vector<float> rows;
  for (int i = 0; i < 30; ++i) {
    rows.push_back(static_cast<float>(std::sin(0.7 * i) * 2));
    rows.push_back(static_cast<float>(std::cos(1.1 * i)));
  }
  EdgeCaseOptions o;
  o.training = rows;
  const EdgeCaseReport r = find_edge_cases(model, rows, {}, o);
  std::size_t closest = 0;
  double best = 1e300;
  for (std::size_t i = 0; i < 30; ++i) {
    const double d = std::fabs(0.5 + rows[2 * i] - 2.0 * rows[2 * i + 1]) / std::sqrt(5.0);
    if (d < best) best = d, closest = i;
  }
  const auto lowest =
      static_cast<std::size_t>(std::min_element(r.margins.begin(), r.margins.end()) - r.margins.begin());
  EXPECT_EQ(lowest, closest);
  ASSERT_FALSE(r.risky.empty());
  EXPECT_EQ(r.risky.front().index, static_cast<std::int64_t>(closest));
  EXPECT_NE(r.risky.front().reasons.front().find("margin"), std::string::npos);
  // The margin of {0, f} is |f|, its gradient's norm |w| everywhere: no input stands out.
  for (const double g : r.gradient_norms) EXPECT_NEAR(g, std::sqrt(5.0), 1e-6);
  EXPECT_NEAR(r.margins[closest], best * std::sqrt(5.0), 1e-5);
  EXPECT_EQ(r.distance_space, "inputs");
  EXPECT_EQ(r.mahalanobis.size(), 30u);
  // 3 of 30 rows at or below the 10% cut (margins distinct).
  std::int64_t flagged = 0;
  for (const auto& c : r.risky) flagged += c.flags;
  EXPECT_GE(flagged, 3);
}

TEST(EdgeCases, FarRowsAreOutOfDistribution) {
  FunctionModel model = testing::linear_classifier({1.0, 0.0, 0.0}, 0.0);
  const std::vector<float> training = training_rows();
  const std::vector<float> rows = {0.1f, 0.2f, 0.3f, 8.0f, -6.0f, 3.0f};
  EdgeCaseOptions o;
  o.training = training;
  const EdgeCaseReport r = find_edge_cases(model, rows, {}, o);
  EXPECT_LT(r.mahalanobis[0], r.ood_threshold);
  EXPECT_GT(r.mahalanobis[1], r.ood_threshold);
  bool found = false;
  for (const auto& c : r.risky)
    if (c.index == 1)
      for (const auto& why : c.reasons) found = found || why.find("Mahalanobis") != std::string::npos;
  EXPECT_TRUE(found);
}

TEST(NeuronCoverage, CountsUnitsAboveTheThresholdOnSomeInput) {
  // Units {x, -x, 0, x - 5}: over x in {1, 2}, only the first exceeds 0.
  FunctionModel layer(
      1, 4,
      [](const std::vector<double>& x) {
        return std::vector<double>{x[0], -x[0], 0, x[0] - 5};
      },
      [](const std::vector<double>&, std::int64_t) { return std::vector<double>{0}; });
  const std::vector<float> rows = {1, 2};
  const Coverage c = neuron_coverage(layer, rows, 0);
  EXPECT_EQ(c.covered, 1);
  EXPECT_EQ(c.units, 4);
  const std::vector<float> wider = {1, 2, -3};
  EXPECT_EQ(neuron_coverage(layer, wider, 0).covered, 2);
  EXPECT_DOUBLE_EQ(neuron_coverage(layer, wider, 0).fraction(), 0.5);
}

}  // namespace
}  // namespace tfdebug::robust
