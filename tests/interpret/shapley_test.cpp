// Shapley values against the reference's golden values and axioms
// (../shared/reference/interpretability.md section 2).
#include "tfdebug/interpret/shapley.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "test_models.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::interpret {
namespace {

using testing::FunctionModel;

FunctionModel product_plus() {  // f = x1 x2 + x3
  return FunctionModel(
      3, 1, [](const std::vector<double>& x) { return std::vector<double>{x[0] * x[1] + x[2]}; },
      [](const std::vector<double>& x, std::int64_t) {
        return std::vector<double>{x[1], x[0], 1};
      });
}

// A model with interactions of every order over 6 features, 2 outputs.
FunctionModel tangled() {
  return FunctionModel(
      6, 2,
      [](const std::vector<double>& x) {
        const double a = std::tanh(x[0] * x[1] - x[2]) + x[3] * x[4] * x[5] + 0.3 * x[0] * x[0];
        return std::vector<double>{a, std::sin(x[1] + x[4]) * x[2]};
      },
      [](const std::vector<double>&, std::int64_t) { return std::vector<double>(6, 0.0); });
}

TEST(ExactShapley, ReferenceGoldenValues) {
  FunctionModel m = product_plus();
  const std::vector<float> x = {1, 1, 1};
  const ShapleyAttribution a = exact_shapley(m, x, 0);
  EXPECT_EQ(a.method, "shap-exact");
  EXPECT_NEAR(a.feature_values[0], 0.5, 1e-12);
  EXPECT_NEAR(a.feature_values[1], 0.5, 1e-12);
  EXPECT_NEAR(a.feature_values[2], 1.0, 1e-12);
  EXPECT_NEAR(a.delta, 0.0, 1e-12);
  EXPECT_EQ(a.evaluations, 8);  // 2^3 coalitions x 1 background row
}

TEST(ExactShapley, EfficiencySymmetryAndDummy) {
  // f = x0 x1 + 0 * x2: x2 is a dummy (0), x0 and x1 are symmetric; against a background of
  // two rows the values still sum to f(x) - E[f(b)].
  FunctionModel m(
      3, 1, [](const std::vector<double>& x) { return std::vector<double>{x[0] * x[1]}; },
      [](const std::vector<double>&, std::int64_t) { return std::vector<double>(3, 0.0); });
  const std::vector<float> x = {2, 2, 5};
  ShapleyOptions o;
  o.background = {0, 0, 0, 1, 1, 1};
  const ShapleyAttribution a = exact_shapley(m, x, 0, o);
  EXPECT_NEAR(a.feature_values[0], a.feature_values[1], 1e-12);
  EXPECT_NEAR(a.feature_values[2], 0.0, 1e-12);
  EXPECT_NEAR(a.sum(), 4 - 0.5, 1e-9);
  EXPECT_DOUBLE_EQ(a.reference_output, 0.5);
}

TEST(KernelShap, FullEnumerationEqualsExactShapley) {
  FunctionModel m = tangled();
  const std::vector<float> x = {0.5f, -1, 2, 1, 0.25f, -0.75f};
  ShapleyOptions o;
  o.background = {0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, -0.5f, 0.5f, 0, 2, -1, 0.3f};
  o.samples = 62;  // 2^6 - 2: every coalition
  for (const std::int64_t target : {0, 1}) {
    const ShapleyAttribution exact = exact_shapley(m, x, target, o);
    const ShapleyAttribution kernel = kernel_shap(m, x, target, o);
    EXPECT_EQ(kernel.method, "kernel-shap");
    for (std::size_t i = 0; i < 6; ++i)
      EXPECT_NEAR(kernel.feature_values[i], exact.feature_values[i], 1e-6) << i;
    EXPECT_NEAR(kernel.delta, 0.0, 1e-9);
  }
}

TEST(KernelShap, ShapsLinearTest) {
  // shap's test_linear: f = x0 + 2 x1 on data that is also the background; phi = (x - mean) (1, 2, 0).
  FunctionModel m(
      3, 1, [](const std::vector<double>& x) { return std::vector<double>{x[0] + 2 * x[1]}; },
      [](const std::vector<double>&, std::int64_t) {
        return std::vector<double>{1, 2, 0};
      });
  std::mt19937 rng(0);
  std::normal_distribution<float> normal;
  ShapleyOptions o;
  for (int i = 0; i < 30 * 3; ++i) o.background.push_back(normal(rng));
  double mean[3] = {0, 0, 0};
  for (int i = 0; i < 90; ++i) mean[i % 3] += o.background[static_cast<std::size_t>(i)] / 30.0;
  const std::vector<float> x(o.background.begin(), o.background.begin() + 3);
  const ShapleyAttribution a = kernel_shap(m, x, 0, o);
  EXPECT_NEAR(a.feature_values[0], (x[0] - mean[0]) * 1, 1e-3 * std::fabs(x[0] - mean[0]) + 1e-6);
  EXPECT_NEAR(a.feature_values[1], (x[1] - mean[1]) * 2, 1e-3 * std::fabs(x[1] - mean[1]) + 1e-6);
  EXPECT_NEAR(a.feature_values[2], 0.0, 1e-6);
}

TEST(KernelShap, SampledBudgetIsCloseAndSeeded) {
  // 12 features: 4094 coalitions; a budget of 600 samples part of them.
  FunctionModel m(
      12, 1,
      [](const std::vector<double>& x) {
        double s = 0;
        for (std::size_t j = 0; j < 12; ++j) s += double(j + 1) * x[j];
        return std::vector<double>{s + x[0] * x[1] + std::tanh(x[2] * x[3])};
      },
      [](const std::vector<double>&, std::int64_t) { return std::vector<double>(12, 0.0); });
  std::vector<float> x(12);
  for (std::size_t j = 0; j < 12; ++j) x[j] = 0.1f * float(j) - 0.4f;
  ShapleyOptions o;
  o.samples = 600;
  o.seed = 5;
  const ShapleyAttribution a = kernel_shap(m, x, 0, o);
  const ShapleyAttribution b = kernel_shap(m, x, 0, o);
  EXPECT_EQ(a.feature_values, b.feature_values);  // the same seed, bit for bit
  EXPECT_NEAR(a.delta, 0.0, 1e-9);                // efficiency holds exactly
  o.samples = 4094;
  const ShapleyAttribution exact = kernel_shap(m, x, 0, o);
  for (std::size_t j = 0; j < 12; ++j) EXPECT_NEAR(a.feature_values[j], exact.feature_values[j], 0.05) << j;
  EXPECT_EQ(a.evaluations, 600 + 2);  // the budget, and v(all), v(none)
}

TEST(KernelShap, OneOrNoVaryingFeature) {
  FunctionModel m = product_plus();
  const std::vector<float> x = {1, 1, 3};
  ShapleyOptions o;
  o.background = {1, 1, 0};  // only x2 differs from the background: it takes the whole change
  const ShapleyAttribution a = kernel_shap(m, x, 0, o);
  EXPECT_EQ(a.feature_values, (std::vector<double>{0, 0, 3}));
  o.background = {1, 1, 3};  // nothing varies
  EXPECT_EQ(kernel_shap(m, x, 0, o).feature_values, (std::vector<double>{0, 0, 0}));
}

TEST(PermutationShap, EfficiencyIsExactAndAdditiveModelsAreExact) {
  FunctionModel additive = testing::linear({1, -2, 0.5, 4}, 1);
  const std::vector<float> x = {1, 2, 3, 4};
  ShapleyOptions o;
  o.seed = 9;
  const ShapleyAttribution a = permutation_shap(additive, x, 0, o);
  EXPECT_EQ(a.method, "shap-permutation");
  EXPECT_NEAR(a.feature_values[0], 1, 1e-6);
  EXPECT_NEAR(a.feature_values[1], -4, 1e-6);
  EXPECT_NEAR(a.feature_values[2], 1.5, 1e-6);
  EXPECT_NEAR(a.feature_values[3], 16, 1e-5);
  EXPECT_EQ(a.evaluations, (500 / 9) * 9);  // shap's budget: max_evals / (2M + 1) permutations
  FunctionModel m = tangled();
  const std::vector<float> y = {0.5f, -1, 2, 1, 0.25f, -0.75f};
  const ShapleyAttribution t = permutation_shap(m, y, 0, o);
  EXPECT_NEAR(t.delta, 0.0, 1e-6);
  const ShapleyAttribution exact = exact_shapley(m, y, 0, o);
  for (std::size_t i = 0; i < 6; ++i) EXPECT_NEAR(t.feature_values[i], exact.feature_values[i], 0.1) << i;
}

TEST(Shapley, GroupsAreFeaturesAndShareTheirValue) {
  // Four inputs in two groups {0, 1} and {2, 3}: f = (x0 + x1) * (x2 + x3) at 1s, baseline 0:
  // two symmetric players of a product, 2 each, shared 1 per element.
  FunctionModel m(
      4, 1, [](const std::vector<double>& x) { return std::vector<double>{(x[0] + x[1]) * (x[2] + x[3])}; },
      [](const std::vector<double>&, std::int64_t) { return std::vector<double>(4, 0.0); });
  const std::vector<float> x = {1, 1, 1, 1};
  ShapleyOptions o;
  o.groups = {0, 0, 1, 1};
  const ShapleyAttribution a = exact_shapley(m, x, 0, o);
  EXPECT_EQ(a.feature_values, (std::vector<double>{2, 2}));
  EXPECT_EQ(a.values, (std::vector<double>{1, 1, 1, 1}));
  o.groups = {0, 0, 2, 2};  // feature 1 has no element
  EXPECT_THROW(exact_shapley(m, x, 0, o), Error);
}

TEST(Shapley, BatchesAreBoundedAndBadInputIsClear) {
  FunctionModel m = tangled();
  const std::vector<float> x = {0.5f, -1, 2, 1, 0.25f, -0.75f};
  ShapleyOptions o;
  o.background = std::vector<float>(6 * 10, 0.0f);  // 10 rows
  o.max_batch = 32;
  (void)exact_shapley(m, x, 0, o);
  EXPECT_EQ(m.largest_batch, 32);  // 640 rows in calls of at most 32
  o.background.pop_back();
  EXPECT_THROW(exact_shapley(m, x, 0, o), Error);  // not a whole number of rows
  o = {};
  o.max_exact_features = 4;
  EXPECT_THROW(exact_shapley(m, x, 0, o), Error);  // 6 features > 4
}

}  // namespace
}  // namespace tfdebug::interpret
