// Randomized smoothing: Cohen et al.'s goldens when every sample agrees, and a linear base
// classifier, whose smoothed probability and exact certified radius are known in closed form.
#include "tfdebug/robust/smoothing.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "../interpret/test_models.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/normal.hpp"
#include "tfdebug/robust/binomial.hpp"

namespace tfdebug::robust {
namespace {

using interpret::testing::FunctionModel;

FunctionModel constant_model() {
  return FunctionModel(
      2, 3,
      [](const std::vector<double>&) {
        return std::vector<double>{0, 1, 0};
      },
      [](const std::vector<double>&, std::int64_t) { return std::vector<double>(2, 0.0); });
}

// Class 1 when w.x + b > 0.
FunctionModel linear_model(std::vector<double> w, double b) {
  const auto n = static_cast<std::int64_t>(w.size());
  return FunctionModel(
      n, 2,
      [w, b](const std::vector<double>& x) {
        double f = b;
        for (std::size_t j = 0; j < w.size(); ++j) f += w[j] * x[j];
        return std::vector<double>{0, f};
      },
      [w](const std::vector<double>&, std::int64_t t) {
        return t == 1 ? w : std::vector<double>(w.size(), 0.0);
      });
}

TEST(Certify, AllSamplesAgreeGivesCohensGoldens) {
  FunctionModel model = constant_model();
  const std::vector<float> x = {0.3f, -0.2f};
  struct Golden {
    std::int64_t n;
    double radius_per_sigma;  // Phi^-1(alpha^(1/n)), scipy: norm.ppf(0.001 ** (1 / n))
    double rounded;           // as the reference quotes it
  };
  for (const Golden g :
       {Golden{100000, 3.8114565633899145, 3.8115}, Golden{10000, 3.1985775147383384, 3.1986},
        Golden{1000, 2.4632626147808114, 2.4633}}) {
    SmoothingOptions o;
    o.sigma = 0.5;
    o.n = g.n;
    o.max_batch = 4096;
    const Certificate c = certify(model, x, o);
    EXPECT_EQ(c.predicted, 1);
    EXPECT_EQ(c.count, g.n);
    EXPECT_NEAR(c.p_lower, std::pow(0.001, 1.0 / static_cast<double>(g.n)), 1e-15);
    EXPECT_NEAR(c.radius / o.sigma, g.radius_per_sigma, 1e-9);
    EXPECT_NEAR(c.radius / o.sigma, g.rounded, 5e-5);
    EXPECT_EQ(c.evaluations, 100 + g.n);
  }
}

TEST(Certify, LinearClassifierRadiusIsWithinTheStatisticalBoundOfTheExactDistance) {
  const std::vector<double> w = {0.6, -0.8, 0.0};  // |w| = 1
  FunctionModel model = linear_model(w, 0.1);
  const std::vector<float> x = {0.5f, 0.1f, 2.0f};  // f = 0.3 - 0.08 + 0.1 = 0.32
  const double f = 0.1 + 0.6 * 0.5 - 0.8 * double(0.1f);
  const double distance = std::fabs(f);  // / |w| = 1
  SmoothingOptions o;
  o.sigma = 0.25;
  o.seed = 7;
  const Certificate c = certify(model, x, o);
  ASSERT_EQ(c.predicted, 1);
  const double p = normal_cdf(distance / o.sigma);  // the smoothed classifier's exact pA
  // The count is Binomial(n, p): within 5 standard deviations, and the radius follows from it.
  const double sd = std::sqrt(o.n * p * (1 - p));
  EXPECT_NEAR(static_cast<double>(c.count), o.n * p, 5 * sd);
  EXPECT_DOUBLE_EQ(c.p_lower, clopper_pearson_lower(c.count, o.n, o.alpha));
  EXPECT_DOUBLE_EQ(c.radius, o.sigma * normal_quantile(c.p_lower, true));
  const auto k_low = static_cast<std::int64_t>(std::floor(o.n * p - 5 * sd));
  const double radius_low = o.sigma * normal_quantile(clopper_pearson_lower(k_low, o.n, o.alpha), true);
  EXPECT_LE(c.radius, distance);  // a certificate never overstates (probability 1 - alpha)
  EXPECT_GE(c.radius, radius_low);
  EXPECT_GT(c.radius, 0.9 * distance);
  // With pA exact, the formula is the distance itself.
  EXPECT_NEAR(o.sigma * normal_quantile(p, true), distance, 1e-12);
}

TEST(Certify, SeededAndIndependentOfMaxBatch) {
  FunctionModel model = linear_model({1.0, 1.0}, 0.0);
  const std::vector<float> x = {0.1f, 0.05f};
  SmoothingOptions o;
  o.n = 2000;
  o.seed = 3;
  o.max_batch = 1000;
  const Certificate a = certify(model, x, o);
  o.max_batch = 77;
  const Certificate b = certify(model, x, o);
  EXPECT_EQ(a.count, b.count);
  EXPECT_EQ(a.radius, b.radius);
  EXPECT_LE(model.largest_batch, 1000);
  o.seed = 4;
  EXPECT_NE(certify(model, x, o).count, a.count);
}

TEST(Certify, AbstainsOnTheBoundary) {
  FunctionModel model = linear_model({1.0, 0.0}, 0.0);
  const std::vector<float> x = {0.0f, 0.0f};
  SmoothingOptions o;
  o.n = 10000;
  const Certificate c = certify(model, x, o);
  EXPECT_TRUE(c.abstained());
  EXPECT_LT(c.p_lower, 0.5);
  EXPECT_EQ(c.radius, 0);
}

TEST(Predict, AbstainsWhenTheTopTwoAreNotSignificantlyDifferent) {
  FunctionModel boundary = linear_model({1.0, 0.0}, 0.0);
  const std::vector<float> x = {0.0f, 0.0f};
  SmoothingOptions o;
  o.n = 1000;
  const SmoothedPrediction p = predict(boundary, x, o);
  EXPECT_TRUE(p.abstained());
  EXPECT_EQ(p.top_count + p.second_count, 1000);
  EXPECT_DOUBLE_EQ(p.p_value, binomial_test(p.top_count, 1000));
  EXPECT_GT(p.p_value, o.alpha);

  FunctionModel constant = constant_model();
  const SmoothedPrediction q = predict(constant, x, o);
  EXPECT_EQ(q.predicted, 1);
  EXPECT_EQ(q.top_count, 1000);
  EXPECT_LT(q.p_value, 1e-300 + 1e-200);
}

TEST(Certify, BadOptionsAreErrors) {
  FunctionModel model = constant_model();
  const std::vector<float> x = {0.0f, 0.0f};
  SmoothingOptions o;
  o.sigma = 0;
  EXPECT_THROW(certify(model, x, o), Error);
  o.sigma = 1;
  o.alpha = 1;
  EXPECT_THROW(certify(model, x, o), Error);
  const std::vector<float> wrong = {0.0f};
  EXPECT_THROW(certify(model, wrong, {}), Error);
}

}  // namespace
}  // namespace tfdebug::robust
