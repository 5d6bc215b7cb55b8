#include "tfdebug/interpret/quadrature.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "tfdebug/core/error.hpp"

namespace tfdebug::interpret {
namespace {

double integrate(const Rule& rule, double (*f)(double)) {
  double s = 0;
  for (std::size_t k = 0; k < rule.nodes.size(); ++k) s += rule.weights[k] * f(rule.nodes[k]);
  return s;
}

TEST(Quadrature, GaussLegendreIsExactToDegreeTwoNMinusOne) {
  for (const std::int64_t n : {1, 2, 3, 5, 8, 50}) {
    const Rule rule = quadrature(Quadrature::gauss_legendre, n);
    ASSERT_EQ(rule.nodes.size(), static_cast<std::size_t>(n));
    EXPECT_NEAR(std::accumulate(rule.weights.begin(), rule.weights.end(), 0.0), 1.0, 1e-14) << n;
    EXPECT_TRUE(std::is_sorted(rule.nodes.begin(), rule.nodes.end())) << n;
    // x^(2n-1) over [0, 1] is 1 / (2n).
    double s = 0;
    for (std::size_t k = 0; k < rule.nodes.size(); ++k)
      s += rule.weights[k] * std::pow(rule.nodes[k], 2 * n - 1);
    EXPECT_NEAR(s, 1.0 / (2.0 * double(n)), 1e-13) << n;
  }
}

TEST(Quadrature, KnownNodesAndWeights) {
  // Two points: (1 -+ 1/sqrt(3)) / 2, weights 1/2; three points: (1 - sqrt(3/5)) / 2, 1/2, ... with 5/18,
  // 8/18.
  const Rule two = quadrature(Quadrature::gauss_legendre, 2);
  EXPECT_NEAR(two.nodes[0], (1 - 1 / std::sqrt(3.0)) / 2, 1e-15);
  EXPECT_NEAR(two.weights[1], 0.5, 1e-15);
  const Rule three = quadrature(Quadrature::gauss_legendre, 3);
  EXPECT_NEAR(three.nodes[0], (1 - std::sqrt(0.6)) / 2, 1e-15);
  EXPECT_NEAR(three.nodes[1], 0.5, 1e-15);
  EXPECT_NEAR(three.weights[0], 5.0 / 18, 1e-15);
  EXPECT_NEAR(three.weights[1], 8.0 / 18, 1e-15);
}

TEST(Quadrature, RiemannRulesAndTheirWeights) {
  const Rule left = quadrature(Quadrature::riemann_left, 4);
  const Rule right = quadrature(Quadrature::riemann_right, 4);
  const Rule middle = quadrature(Quadrature::riemann_middle, 4);
  EXPECT_EQ(left.nodes, (std::vector<double>{0, 0.25, 0.5, 0.75}));
  EXPECT_EQ(right.nodes, (std::vector<double>{0.25, 0.5, 0.75, 1}));
  EXPECT_EQ(middle.nodes, (std::vector<double>{0.125, 0.375, 0.625, 0.875}));
  for (const Rule* r : {&left, &right, &middle})
    EXPECT_DOUBLE_EQ(std::accumulate(r->weights.begin(), r->weights.end(), 0.0), 1.0);
  // A linear integrand is exact under the middle rule (Captum's trapezoid would give 2% low at n = 50).
  EXPECT_DOUBLE_EQ(integrate(quadrature(Quadrature::riemann_middle, 50), [](double t) { return t; }), 0.5);
}

TEST(Quadrature, NamesAndBadInput) {
  EXPECT_EQ(parse_quadrature("riemann-middle"), Quadrature::riemann_middle);
  EXPECT_EQ(quadrature_name(Quadrature::gauss_legendre), "gauss-legendre");
  EXPECT_THROW(parse_quadrature("trapezoid"), Error);
  EXPECT_THROW(quadrature(Quadrature::gauss_legendre, 0), Error);
}

}  // namespace
}  // namespace tfdebug::interpret
