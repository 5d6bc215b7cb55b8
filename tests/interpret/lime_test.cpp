// LIME tabular: the reference's tests (section 2) and the surrogate's own facts. The surrogate
// against sklearn's Ridge is checked in tests/interpret/explain_test.sh.
#include "tfdebug/interpret/lime.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "test_models.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::interpret {
namespace {

std::vector<float> gaussian_rows(std::int64_t rows, const std::vector<double>& stdev, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> out;
  for (std::int64_t r = 0; r < rows; ++r)
    for (const double s : stdev) out.push_back(static_cast<float>(s) * normal(rng));
  return out;
}

TEST(Lime, ALinearModelWithoutBinsGivesWeightsTimesScale) {
  // Without discretisation the interpretable features are standardised values, so the
  // coefficients approach w_i * sigma_i: their signs and ranking are w * sigma's.
  testing::FunctionModel m = testing::linear({1, -2, 0.5, 0}, 0.3);
  LimeOptions o;
  o.training = gaussian_rows(400, {1, 0.5, 4, 2}, 1);
  o.discretize = false;
  o.seed = 2;
  const std::vector<float> x = {0.5f, 0.2f, -1, 1};
  const LimeAttribution a = lime_tabular(m, x, 0, o);
  EXPECT_EQ(a.method, "lime");
  const double expected[] = {1 * 1, -2 * 0.5, 0.5 * 4, 0};
  for (std::size_t j = 0; j < 4; ++j)
    EXPECT_NEAR(a.values[j], expected[j], 0.1 * std::fabs(expected[j]) + 0.02) << j;
  EXPECT_GT(a.r2, 0.999);  // a linear model is fitted exactly, up to the ridge
  EXPECT_NEAR(a.local_prediction, a.output, 0.05);
  EXPECT_EQ(a.evaluations, 5000);
}

TEST(Lime, TheSameSeedGivesTheSameExplanationBitForBit) {
  testing::FunctionModel r = testing::reference_r();
  LimeOptions o;
  o.training = gaussian_rows(200, {1, 1}, 3);
  o.seed = 11;
  o.samples = 800;
  const std::vector<float> x = {1, 2};
  const LimeAttribution a = lime_tabular(r, x, 0, o);
  o.max_batch = 7;  // the batches do not change the draws
  const LimeAttribution b = lime_tabular(r, x, 0, o);
  EXPECT_EQ(a.values, b.values);
  EXPECT_EQ(a.intercept, b.intercept);
  o.seed = 12;
  EXPECT_NE(lime_tabular(r, x, 0, o).values, a.values);
}

TEST(Lime, TheNeighbourhoodStartsAtXAndIsBinary) {
  testing::FunctionModel r = testing::reference_r();
  LimeOptions o;
  o.training = gaussian_rows(100, {1, 1}, 4);
  o.samples = 300;
  o.keep_neighbourhood = true;
  const std::vector<float> x = {1, 2};
  const LimeAttribution a = lime_tabular(r, x, 0, o);
  ASSERT_EQ(a.data.size(), 600U);
  ASSERT_EQ(a.weights.size(), 300U);
  EXPECT_EQ(a.data[0], 1);
  EXPECT_EQ(a.data[1], 1);
  EXPECT_EQ(a.weights[0], 1);
  EXPECT_DOUBLE_EQ(a.outputs[0], 3);  // R(1, 2)
  for (const double v : a.data) EXPECT_TRUE(v == 0 || v == 1);
  // Both features matter here: x2 = 2 is past R's kink, and x1 > 0.
  EXPECT_GT(a.values[0], 0);
  EXPECT_GT(a.values[1], 0);
}

TEST(Lime, BadInputIsAClearError) {
  testing::FunctionModel r = testing::reference_r();
  const std::vector<float> x = {1, 2};
  LimeOptions o;
  EXPECT_THROW(lime_tabular(r, x, 0, o), Error);  // no training data
  o.training = {1, 2, 3};
  EXPECT_THROW(lime_tabular(r, x, 0, o), Error);  // not whole rows
  o.training = {1, 2, 3, 4};
  o.samples = 1;
  EXPECT_THROW(lime_tabular(r, x, 0, o), Error);
}

}  // namespace
}  // namespace tfdebug::interpret
