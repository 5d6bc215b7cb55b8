#include "tfdebug/robust/binomial.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "tfdebug/core/error.hpp"

namespace tfdebug::robust {
namespace {

// The continued fraction of I_x(a, b) (modified Lentz), which converges quickly for
// x < (a + 1) / (a + b + 2); its terms needed grow like sqrt(max(a, b)), hence the generous cap.
double beta_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  constexpr double kEps = 1e-16;
  const double qab = a + b, qap = a + 1, qam = a - 1;
  double c = 1, d = 1 - qab * x / qap;
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 100000; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double del = d * c;
    h *= del;
    if (std::fabs(del - 1) < kEps) return h;
  }
  return h;  // not reached for the a, b of binomial counts below 1e9
}

}  // namespace

double incomplete_beta(double a, double b, double x) {
  if (!(a > 0) || !(b > 0)) throw Error("incomplete_beta: a and b must be positive");
  if (!(x >= 0) || !(x <= 1)) throw Error("incomplete_beta: x must be in [0, 1]");
  if (x == 0) return 0;
  if (x == 1) return 1;
  // log of x^a (1-x)^b / B(a, b), in logs so that a, b of 1e5 neither overflow nor underflow.
  const double log_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  const double front = std::exp(log_front);
  if (x < (a + 1) / (a + b + 2)) return front * beta_fraction(a, b, x) / a;
  return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

double beta_quantile(double q, double a, double b) {
  if (!(q >= 0) || !(q <= 1)) throw Error("beta_quantile: q must be in [0, 1]");
  double lo = 0, hi = 1;
  // Bisection in value while the midpoint is a new double; the bracket keeps I(lo) <= q <= I(hi).
  for (;;) {
    const double mid = lo + (hi - lo) / 2;
    if (mid <= lo || mid >= hi) break;
    if (incomplete_beta(a, b, mid) < q) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

double binomial_cdf(std::int64_t k, std::int64_t n, double p) {
  if (n < 0) throw Error("binomial_cdf: n must be at least 0");
  if (k < 0) return 0;
  if (k >= n) return 1;
  // P(X <= k) = I_{1-p}(n - k, k + 1).
  return incomplete_beta(static_cast<double>(n - k), static_cast<double>(k + 1), 1 - p);
}

namespace {
void check_counts(std::int64_t k, std::int64_t n, double alpha) {
  if (n < 1 || k < 0 || k > n) {
    throw Error("binomial counts: expected 0 <= k <= n and n >= 1, got k = " + std::to_string(k) +
                ", n = " + std::to_string(n));
  }
  if (!(alpha > 0) || !(alpha < 1)) throw Error("alpha must be in (0, 1), got " + std::to_string(alpha));
}
}  // namespace

double clopper_pearson_lower(std::int64_t k, std::int64_t n, double alpha) {
  check_counts(k, n, alpha);
  if (k == 0) return 0;
  return beta_quantile(alpha, static_cast<double>(k), static_cast<double>(n - k + 1));
}

double clopper_pearson_upper(std::int64_t k, std::int64_t n, double alpha) {
  check_counts(k, n, alpha);
  if (k == n) return 1;
  return beta_quantile(1 - alpha, static_cast<double>(k + 1), static_cast<double>(n - k));
}

double binomial_test(std::int64_t k, std::int64_t n) {
  if (n < 0 || k < 0 || k > n) throw Error("binomial_test: expected 0 <= k <= n");
  if (n == 0 || 2 * k == n) return 1;
  // Symmetric under p = 1/2: the outcomes no likelier than k are the two tails beyond min(k, n-k).
  const std::int64_t tail = std::min(k, n - k);
  return std::min(1.0, 2 * binomial_cdf(tail, n, 0.5));
}

}  // namespace tfdebug::robust
