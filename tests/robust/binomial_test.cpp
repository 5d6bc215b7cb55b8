// The exact binomial statistics against scipy 1.10 (special.betainc, stats.beta.ppf,
// stats.binomtest) and against bounds found here independently, by bisection on a binomial tail
// summed term by term.
#include "tfdebug/robust/binomial.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace tfdebug::robust {
namespace {

TEST(IncompleteBeta, MatchesScipy) {
  EXPECT_NEAR(incomplete_beta(2, 3, 0.4), 0.5247999999999999, 1e-15);
  EXPECT_NEAR(incomplete_beta(0.5, 0.5, 0.3), 0.3690101195655454, 1e-14);
  EXPECT_NEAR(incomplete_beta(100, 50, 0.7), 0.8054481662277535, 1e-13);
  EXPECT_NEAR(incomplete_beta(99950, 51, 0.9994), 0.10760805221477279, 1e-11);
  EXPECT_NEAR(incomplete_beta(5, 99996, 1e-4), 0.9707529867890726, 1e-11);
  EXPECT_EQ(incomplete_beta(3, 4, 0), 0);
  EXPECT_EQ(incomplete_beta(3, 4, 1), 1);
}

TEST(ClopperPearson, MatchesScipyBetaQuantiles) {
  struct Case {
    std::int64_t k, n;
    double alpha, lower, upper;
  };
  const Case cases[] = {
      {0, 10, 0.001, 0.0, 0.49881276637272765},
      {1, 10, 0.001, 0.00010004502852067863, 0.6237230890888255},
      {7, 10, 0.05, 0.39337578389458766, 0.9127355660858496},
      {500, 1000, 0.001, 0.45077105398478223, 0.5492289460152178},
      {99950, 100000, 0.001, 0.9992406795873772, 0.9996903823721515},
      {100000, 100000, 0.001, 0.9999309248330094, 1.0},
      {3, 100000, 0.001, 1.905351014095313e-06, 0.0001306158361956854},
  };
  for (const Case& c : cases) {
    EXPECT_NEAR(clopper_pearson_lower(c.k, c.n, c.alpha), c.lower, 1e-12 * std::max(1.0, c.lower * 1e3))
        << c.k << "/" << c.n;
    EXPECT_NEAR(clopper_pearson_upper(c.k, c.n, c.alpha), c.upper, 1e-11) << c.k << "/" << c.n;
  }
}

// P(X >= k) for X ~ Binomial(n, p), each term from lgamma in long double: nothing shared with the
// continued fraction under test.
double upper_tail(std::int64_t k, std::int64_t n, double p) {
  long double sum = 0;
  for (std::int64_t j = k; j <= n; ++j) {
    const long double log_term =
        std::lgamma(static_cast<long double>(n + 1)) - std::lgamma(static_cast<long double>(j + 1)) -
        std::lgamma(static_cast<long double>(n - j + 1)) + j * std::log(static_cast<long double>(p)) +
        (n - j) * std::log1p(-static_cast<long double>(p));
    sum += std::exp(log_term);
  }
  return static_cast<double>(sum);
}

// The Clopper-Pearson lower bound by definition: the p at which P(X >= k) = alpha.
double brute_lower(std::int64_t k, std::int64_t n, double alpha) {
  double lo = 0, hi = 1;
  for (int i = 0; i < 100; ++i) {
    const double mid = (lo + hi) / 2;
    (upper_tail(k, n, mid) < alpha ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

TEST(ClopperPearson, LowerBoundIsWhereTheBinomialTailEqualsAlpha) {
  EXPECT_NEAR(clopper_pearson_lower(37, 50, 0.001), brute_lower(37, 50, 0.001), 1e-10);
  EXPECT_NEAR(clopper_pearson_lower(812, 1000, 0.01), brute_lower(812, 1000, 0.01), 1e-10);
  EXPECT_NEAR(clopper_pearson_lower(9990, 10000, 0.001), brute_lower(9990, 10000, 0.001), 1e-10);
}

TEST(ClopperPearson, AllSuccessesGiveAlphaToTheOneOverN) {
  for (const std::int64_t n : {1000, 10000, 100000})
    EXPECT_NEAR(clopper_pearson_lower(n, n, 0.001), std::pow(0.001, 1.0 / static_cast<double>(n)), 1e-15);
}

TEST(BinomialTest, MatchesScipyBinomtest) {
  EXPECT_NEAR(binomial_test(60, 100), 0.05688793364098088, 1e-14);
  EXPECT_NEAR(binomial_test(55, 100), 0.36820161732669576, 1e-14);
  EXPECT_NEAR(binomial_test(10, 12), 0.03857421875, 1e-15);
  EXPECT_NEAR(binomial_test(2, 12), 0.03857421875, 1e-15);  // symmetric
  EXPECT_NEAR(binomial_test(530, 1000), 0.06202319509836348, 1e-13);
  EXPECT_EQ(binomial_test(50, 100), 1);
}

}  // namespace
}  // namespace tfdebug::robust
