// Exact binomial statistics for randomized smoothing (smoothing.hpp): the regularized incomplete
// beta function, its inverse (beta quantiles), Clopper-Pearson bounds and the two-sided binomial
// test. No normal or Wilson approximations: certificates rest on these numbers.
//
//   const double lower = tfdebug::robust::clopper_pearson_lower(99'950, 100'000, 0.001);
//   const double p = tfdebug::robust::binomial_test(60, 100);  // H0: p = 1/2, two-sided
#pragma once

#include <cstdint>

namespace tfdebug::robust {

// I_x(a, b), a, b > 0, x in [0, 1]: the CDF of Beta(a, b) at x. Lentz's continued fraction on
// the side where it converges fast, to double precision.
double incomplete_beta(double a, double b, double x);

// The q-quantile of Beta(a, b): the x with I_x(a, b) = q, by bisection on doubles until the
// bracket cannot shrink (I_x is monotone, so the answer is the last representable bracket).
double beta_quantile(double q, double a, double b);

// P(X <= k) for X ~ Binomial(n, p).
double binomial_cdf(std::int64_t k, std::int64_t n, double p);

// One-sided Clopper-Pearson bounds on p from k successes in n trials at level alpha:
// P(bound wrong) <= alpha. lower = Beta quantile alpha of (k, n - k + 1), 0 when k = 0; upper =
// quantile 1 - alpha of (k + 1, n - k), 1 when k = n. (statsmodels' proportion_confint(k, n,
// alpha=2*alpha, method="beta"), as Cohen et al.'s code calls it.)
double clopper_pearson_lower(std::int64_t k, std::int64_t n, double alpha);
double clopper_pearson_upper(std::int64_t k, std::int64_t n, double alpha);

// The two-sided exact binomial test of H0: p = 1/2 for k successes in n trials (scipy's
// binom_test(k, n, 0.5)): the probability of an outcome at least as far from n/2 as k.
double binomial_test(std::int64_t k, std::int64_t n);

}  // namespace tfdebug::robust
