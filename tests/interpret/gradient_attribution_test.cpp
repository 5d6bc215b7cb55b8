// The gradient methods against the reference's golden values and axioms
// (../shared/reference/interpretability.md section 1, values re-derived there).
#include "tfdebug/interpret/gradient_attribution.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "test_models.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::interpret {
namespace {

using testing::FunctionModel;

FunctionModel cube() {  // f = x^3 in one dimension
  return FunctionModel(
      1, 1, [](const std::vector<double>& x) { return std::vector<double>{x[0] * x[0] * x[0]}; },
      [](const std::vector<double>& x, std::int64_t) { return std::vector<double>{3 * x[0] * x[0]}; });
}

FunctionModel product() {  // f = x1 x2
  return FunctionModel(
      2, 1, [](const std::vector<double>& x) { return std::vector<double>{x[0] * x[1]}; },
      [](const std::vector<double>& x, std::int64_t) {
        return std::vector<double>{x[1], x[0]};
      });
}

TEST(GradientXInput, ReferenceModelIsNotComplete) {
  FunctionModel r = testing::reference_r();
  const std::vector<float> x = {1, 2};
  const Attribution a = gradient_x_input(r, x, 0);
  EXPECT_EQ(a.method, "gradient-x-input");
  EXPECT_EQ(a.values, (std::vector<double>{2, 4}));  // sum 6, but f(x) - f(0) = 3
  EXPECT_DOUBLE_EQ(a.output, 3);
  EXPECT_TRUE(std::isnan(a.delta));
}

TEST(GradientXInput, LinearModelSumsToOutputLessBias) {
  FunctionModel m = testing::linear({0.5, -2, 3}, 0.25);
  const std::vector<float> x = {2, 1, -1};
  const Attribution a = gradient_x_input(m, x, 0);
  EXPECT_EQ(a.values, (std::vector<double>{1, -2, -3}));
  EXPECT_DOUBLE_EQ(a.sum(), a.output - 0.25);
}

TEST(IntegratedGradients, CubeGaussLegendreIsExactAtFiveNodes) {
  FunctionModel m = cube();
  const std::vector<float> x = {1};
  IntegratedGradientsOptions o;
  o.steps = 5;
  const Attribution a = integrated_gradients(m, x, 0, o);
  EXPECT_NEAR(a.values[0], 1.0, 1e-6);
  EXPECT_NEAR(a.delta, 0.0, 1e-6);
  o.method = Quadrature::riemann_left;
  EXPECT_NEAR(integrated_gradients(m, x, 0, o).values[0], 0.72, 1e-6);
  o.steps = 50;
  EXPECT_NEAR(integrated_gradients(m, x, 0, o).values[0], 0.9702, 1e-6);
}

TEST(IntegratedGradients, ReferenceModelGoldenValues) {
  FunctionModel r = testing::reference_r();
  const std::vector<float> x = {1, 2};
  const Attribution gl = integrated_gradients(r, x, 0);  // 50 Gauss-Legendre nodes
  EXPECT_EQ(gl.method, "integrated-gradients");
  EXPECT_NEAR(gl.values[0], 2.0, 1e-6);
  EXPECT_NEAR(gl.values[1], 1.0451197, 1e-6);
  EXPECT_NEAR(gl.delta, 0.0451197, 1e-6);  // the kink at 1.5: do not expect a tiny delta
  EXPECT_DOUBLE_EQ(gl.output, 3);
  EXPECT_DOUBLE_EQ(gl.reference_output, 0);
  IntegratedGradientsOptions left;
  left.method = Quadrature::riemann_left;
  EXPECT_NEAR(integrated_gradients(r, x, 0, left).values[1], 0.96, 1e-6);
}

TEST(IntegratedGradients, LinearIsExactForAnyStepsAndBaseline) {
  FunctionModel m = testing::linear({0.5, -2, 3}, 0.25);
  const std::vector<float> x = {2, 1, -1};
  for (const std::int64_t steps : {1, 7, 50}) {
    IntegratedGradientsOptions o;
    o.steps = steps;
    o.baseline = {1, 1, 1};
    const Attribution a = integrated_gradients(m, x, 0, o);
    EXPECT_NEAR(a.values[0], 0.5, 1e-6);
    EXPECT_NEAR(a.values[1], 0.0, 1e-6);
    EXPECT_NEAR(a.values[2], -6.0, 1e-6);
    EXPECT_NEAR(a.delta, 0.0, 1e-5);
  }
}

TEST(IntegratedGradients, ProductSplitsEvenly) {
  FunctionModel m = product();
  const std::vector<float> x = {1, 1};
  const Attribution a = integrated_gradients(m, x, 0);
  EXPECT_NEAR(a.values[0], 0.5, 1e-6);
  EXPECT_NEAR(a.values[1], 0.5, 1e-6);
}

// Note [Bounded batches]: 50 steps with max_batch 8 are 7 calls of at most 8 points, and the
// answer does not depend on the chunking.
TEST(IntegratedGradients, MemoryIsBoundedByMaxBatch) {
  FunctionModel r = testing::reference_r();
  const std::vector<float> x = {1, 2};
  IntegratedGradientsOptions o;
  o.max_batch = 8;
  const Attribution chunked = integrated_gradients(r, x, 0, o);
  EXPECT_EQ(r.largest_batch, 8);
  EXPECT_EQ(chunked.evaluations, 50 + 2);  // the nodes, then f(x) and f(baseline)
  FunctionModel whole = testing::reference_r();
  o.max_batch = 1000;
  EXPECT_EQ(integrated_gradients(whole, x, 0, o).values, chunked.values);
  EXPECT_EQ(whole.largest_batch, 50);
}

TEST(PathIntegratedGradients, AxisPathsGiveTheOrderedShares) {
  FunctionModel m = product();
  const std::vector<float> x = {1, 1};
  // x1 first: (0,0) -> (1,0) -> (1,1) gives (0, 1); x2 first gives (1, 0). Every path sums to 1.
  const Attribution first = path_integrated_gradients(m, x, 0, {{1, 0}, {1, 1}});
  EXPECT_EQ(first.method, "path-integrated-gradients");
  EXPECT_NEAR(first.values[0], 0.0, 1e-6);
  EXPECT_NEAR(first.values[1], 1.0, 1e-6);
  const Attribution second = path_integrated_gradients(m, x, 0, {{0, 1}, {1, 1}});
  EXPECT_NEAR(second.values[0], 1.0, 1e-6);
  EXPECT_NEAR(second.values[1], 0.0, 1e-6);
  EXPECT_NEAR(first.delta, 0.0, 1e-6);
  // The two orders averaged: the Shapley values of the baseline game, (1/2, 1/2).
  EXPECT_NEAR((first.values[0] + second.values[0]) / 2, 0.5, 1e-6);
  EXPECT_THROW(path_integrated_gradients(m, x, 0, {{1, 0}}), Error);  // does not end at x
}

TEST(SmoothGrad, LinearModelGivesTheWeightsAndNoVariance) {
  FunctionModel m = testing::linear({0.5, -2, 3}, 0.25);
  const std::vector<float> x = {2, 1, -1};
  SmoothGradOptions o;
  o.samples = 20;
  o.stdev = 0.3;
  o.seed = 7;
  const Attribution a = smoothgrad(m, x, 0, o);
  EXPECT_EQ(a.values, (std::vector<double>{0.5, -2, 3}));
  o.kind = NoiseTunnel::vargrad;
  for (const double v : smoothgrad(m, x, 0, o).values) EXPECT_NEAR(v, 0.0, 1e-12);
}

TEST(SmoothGrad, ZeroNoiseOrOneSampleIsTheBaseMethod) {
  FunctionModel r = testing::reference_r();
  const std::vector<float> x = {1, 2};
  SmoothGradOptions o;
  o.stdev = 0;
  o.base = BaseMethod::gradient_x_input;
  EXPECT_EQ(smoothgrad(r, x, 0, o).values, gradient_x_input(r, x, 0).values);
  o.base = BaseMethod::integrated_gradients;
  o.samples = 1;
  EXPECT_EQ(smoothgrad(r, x, 0, o).values, integrated_gradients(r, x, 0).values);
}

TEST(SmoothGrad, SameSeedSameAnswerWhateverTheBatch) {
  FunctionModel r = testing::reference_r();
  const std::vector<float> x = {0.1f, 1.4f};  // near both kinks: the noise matters
  SmoothGradOptions o;
  o.samples = 50;
  o.stdev = 0.5;
  o.seed = 42;
  o.max_batch = 7;
  const Attribution a = smoothgrad(r, x, 0, o);
  o.max_batch = 64;
  EXPECT_EQ(smoothgrad(r, x, 0, o).values, a.values);
  EXPECT_LE(r.largest_batch, 64);
  o.seed = 43;
  EXPECT_NE(smoothgrad(r, x, 0, o).values, a.values);
  EXPECT_GT(a.values[0], 0.5);  // partly past the kinks
  EXPECT_LT(a.values[0], 2.0);
  ASSERT_EQ(a.variance.size(), 2U);
}

TEST(GradientShap, LinearModelIsInterventionalShap) {
  // phi -> w * (x - E[b]) for a linear model, exactly for any draw of alpha and baseline when
  // every baseline row is drawn equally often; with many samples, to sampling error.
  FunctionModel m = testing::linear({1, 2, -1}, 0);
  const std::vector<float> x = {1, 1, 1};
  GradientShapOptions o;
  o.baselines = {0, 0, 0, 2, 0, 4};  // mean (1, 0, 2)
  o.samples = 4000;
  o.seed = 3;
  const Attribution a = gradient_shap(m, x, 0, o);
  EXPECT_EQ(a.method, "gradient-shap");
  EXPECT_NEAR(a.values[0], 0.0, 0.1);
  EXPECT_NEAR(a.values[1], 2.0, 1e-6);
  EXPECT_NEAR(a.values[2], 1.0, 0.1);
  EXPECT_NEAR(a.reference_output, -1.0, 1e-6);  // mean of f over the baselines: (0 + 0 - 0 + 2 + 0 - 4) / 2
  EXPECT_NEAR(a.delta, 0.0, 0.1);
}

TEST(ExpectedGradients, LinearModelIsWeightsTimesDistanceToTheMean) {
  FunctionModel m = testing::linear({3, -1}, 1);
  const std::vector<float> x = {2, 2};
  ExpectedGradientsOptions o;
  o.background = {0, 0, 1, 1, 2, 4};  // mean (1, 5/3)
  o.samples = 3000;
  o.seed = 11;
  const Attribution a = expected_gradients(m, x, 0, o);
  EXPECT_EQ(a.method, "expected-gradients");
  EXPECT_NEAR(a.values[0], 3.0, 0.1);
  EXPECT_NEAR(a.values[1], -1.0 / 3, 0.1);
  ASSERT_EQ(a.variance.size(), 2U);
  EXPECT_GT(a.variance[0], 0);
  EXPECT_NEAR(a.sum(), a.output - a.reference_output, 0.15);  // completeness in expectation
  EXPECT_THROW(expected_gradients(m, x, 0, {}), Error);       // no background
}

TEST(GradientAttribution, BadInputIsAClearError) {
  FunctionModel r = testing::reference_r();
  const std::vector<float> x = {1, 2};
  EXPECT_THROW(integrated_gradients(r, std::vector<float>{1}, 0), Error);  // wrong size
  EXPECT_THROW(integrated_gradients(r, x, 1), Error);                      // no such output
  IntegratedGradientsOptions o;
  o.baseline = {0};
  EXPECT_THROW(integrated_gradients(r, x, 0, o), Error);
  o = {};
  o.max_batch = 0;
  EXPECT_THROW(integrated_gradients(r, x, 0, o), Error);
  try {
    integrated_gradients(r, x, 5);
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "target 5 is not an output of the model (it has 1)");
  }
}

}  // namespace
}  // namespace tfdebug::interpret
