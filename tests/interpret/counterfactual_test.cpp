// Wachter counterfactuals on a logistic model, where the answer is known (reference section 3).
#include "tfdebug/interpret/counterfactual.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "test_models.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::interpret {
namespace {

// f = sigmoid(w . x + b), w = (1, -2, 0.5), b = -1: f(0) = 0.269.
testing::FunctionModel logistic() {
  const std::vector<double> w = {1, -2, 0.5};
  return testing::FunctionModel(
      3, 1,
      [w](const std::vector<double>& x) {
        double z = -1;
        for (std::size_t j = 0; j < 3; ++j) z += w[j] * x[j];
        return std::vector<double>{1 / (1 + std::exp(-z))};
      },
      [w](const std::vector<double>& x, std::int64_t) {
        double z = -1;
        for (std::size_t j = 0; j < 3; ++j) z += w[j] * x[j];
        const double s = 1 / (1 + std::exp(-z));
        return std::vector<double>{s * (1 - s) * w[0], s * (1 - s) * w[1], s * (1 - s) * w[2]};
      });
}

// Rows whose per-feature MADs are `mad` (each column: -mad, 0, +mad around 0).
std::vector<float> rows_with_mad(const std::vector<float>& mad) {
  std::vector<float> rows;
  for (const float sign : {-1.0f, 0.0f, 1.0f})
    for (const float m : mad) rows.push_back(sign * m);
  return rows;
}

TEST(Wachter, L2MovesAlongTheWeights) {
  testing::FunctionModel m = logistic();
  const std::vector<float> x = {0, 0, 0};
  CounterfactualOptions o;
  o.wanted = 0.9;
  o.distance = Distance::l2;
  const Counterfactual cf = wachter_counterfactual(m, x, o);
  ASSERT_TRUE(cf.valid);
  EXPECT_LE(std::fabs(cf.output - 0.9), 0.05);
  // x' - x is parallel to w.
  const double w[] = {1, -2, 0.5};
  double dot = 0, nd = 0, nw = 0;
  for (std::size_t j = 0; j < 3; ++j) {
    dot += cf.x[j] * w[j];
    nd += cf.x[j] * cf.x[j];
    nw += w[j] * w[j];
  }
  EXPECT_GT(dot / std::sqrt(nd * nw), 0.9999);
  EXPECT_EQ(cf.changed, 3);
}

TEST(Wachter, MadL1MovesOnlyTheCheapestFeature) {
  testing::FunctionModel m = logistic();
  const std::vector<float> x = {0, 0, 0};
  CounterfactualOptions o;
  o.wanted = 0.9;
  o.training = rows_with_mad({1, 1, 1});  // |w| * MAD = (1, 2, 0.5): feature 1 moves, down
  Counterfactual cf = wachter_counterfactual(m, x, o);
  ASSERT_TRUE(cf.valid);
  EXPECT_EQ(cf.changed, 1);
  EXPECT_LT(cf.x[1], 0);
  EXPECT_EQ(cf.x[0], 0);
  EXPECT_EQ(cf.x[2], 0);
  EXPECT_EQ(cf.scale, (std::vector<double>{1, 1, 1}));
  o.training = rows_with_mad({1, 0.1f, 10});  // (1, 0.2, 5): feature 2 moves, up
  cf = wachter_counterfactual(m, x, o);
  ASSERT_TRUE(cf.valid);
  EXPECT_EQ(cf.changed, 1);
  EXPECT_GT(cf.x[2], 0);
  // Feature 2 may not change: the next cheapest, feature 0, moves instead.
  o.immutable = {2};
  cf = wachter_counterfactual(m, x, o);
  ASSERT_TRUE(cf.valid);
  EXPECT_EQ(cf.x[2], 0);
  EXPECT_GT(cf.x[0], 0);
  EXPECT_EQ(cf.changed, 1);
}

TEST(Wachter, BoundsZeroMadAndTheUnreachable) {
  testing::FunctionModel m = logistic();
  const std::vector<float> x = {0, 0, 0};
  CounterfactualOptions o;
  o.wanted = 0.9;
  // Feature 2 is constant in the training rows but for one: MAD 0, scaled by its std instead.
  o.training = {0, 0, 0, 1, 1, 0, -1, -1, 0, 2, 2, 0, -2, -2, 6};
  o.upper = {10, 10, 0.5f};
  o.lower = {-10, -10, -10};
  const Counterfactual cf = wachter_counterfactual(m, x, o);
  EXPECT_NEAR(cf.scale[2], std::sqrt(36.0 * 4 / 25), 1e-6);  // the std of (0, 0, 0, 0, 6)
  ASSERT_TRUE(cf.valid);
  EXPECT_LE(cf.x[2], 0.5f);
  o.wanted = 1.5;  // a sigmoid never gets there
  o.lambda_steps = 3;
  o.iterations = 200;
  EXPECT_FALSE(wachter_counterfactual(m, x, o).valid);
  o.immutable = {3};
  EXPECT_THROW(wachter_counterfactual(m, x, o), Error);
}

}  // namespace
}  // namespace tfdebug::interpret
