#include "tfdebug/interpret/quadrature.hpp"

#include <cmath>
#include <map>
#include <mutex>
#include <numbers>
#include <string>
#include <utility>

#include "tfdebug/core/error.hpp"

namespace tfdebug::interpret {
namespace {

// The n-point Gauss-Legendre rule on [-1, 1] by Newton's method on P_n from the Chebyshev-like
// first guesses cos(pi (k + 3/4) / (n + 1/2)); each root to machine precision, its weight
// 2 / ((1 - t^2) P_n'(t)^2). Mapped to [0, 1]: nodes (1 + t) / 2, weights w / 2.
Rule gauss_legendre(std::int64_t n) {
  Rule rule;
  rule.nodes.resize(static_cast<std::size_t>(n));
  rule.weights.resize(static_cast<std::size_t>(n));
  const double nd = static_cast<double>(n);
  // P_n(t) and P_n'(t), by the three-term recurrence.
  const auto legendre = [&](double t) {
    double p0 = 1, p1 = t;
    for (std::int64_t j = 2; j <= n; ++j) {
      const double jd = static_cast<double>(j);
      const double p2 = ((2 * jd - 1) * t * p1 - (jd - 1) * p0) / jd;
      p0 = p1;
      p1 = p2;
    }
    return std::pair<double, double>{p1, nd * (t * p1 - p0) / (t * t - 1)};
  };
  for (std::int64_t k = 0; k < (n + 1) / 2; ++k) {
    double t = std::cos(std::numbers::pi * (static_cast<double>(k) + 0.75) / (nd + 0.5));
    for (int iteration = 0; iteration < 100; ++iteration) {
      const auto [p, dp] = legendre(t);
      const double step = p / dp;
      t -= step;
      if (std::fabs(step) <= 1e-15) break;
    }
    const double derivative = legendre(t).second;  // at the root itself: the weight to the last bit
    const double weight = 2 / ((1 - t * t) * derivative * derivative);
    // Roots come largest first; place them symmetrically, increasing.
    const auto low = static_cast<std::size_t>(k);
    const auto high = static_cast<std::size_t>(n - 1 - k);
    rule.nodes[low] = (1 - t) / 2;
    rule.nodes[high] = (1 + t) / 2;
    rule.weights[low] = rule.weights[high] = weight / 2;
  }
  return rule;
}

}  // namespace

Rule quadrature(Quadrature method, std::int64_t n) {
  if (n < 1 || n > 100'000) throw Error("steps must be between 1 and 100000, got " + std::to_string(n));
  if (method == Quadrature::gauss_legendre) {
    // Newton's iterations cost microseconds a rule: Integrated Gradients asks for the same one
    // on every call, so the rules made are kept (a few sizes in practice).
    static std::mutex lock;
    static std::map<std::int64_t, Rule> made;
    const std::lock_guard<std::mutex> hold(lock);
    auto found = made.find(n);
    if (found == made.end()) found = made.emplace(n, gauss_legendre(n)).first;
    return found->second;
  }
  Rule rule;
  const double nd = static_cast<double>(n);
  const double shift = method == Quadrature::riemann_left ? 0 : method == Quadrature::riemann_right ? 1 : 0.5;
  for (std::int64_t k = 0; k < n; ++k) {
    rule.nodes.push_back((static_cast<double>(k) + shift) / nd);
    rule.weights.push_back(1 / nd);
  }
  return rule;
}

Quadrature parse_quadrature(std::string_view name) {
  for (const Quadrature q : {Quadrature::gauss_legendre, Quadrature::riemann_left, Quadrature::riemann_right,
                             Quadrature::riemann_middle}) {
    if (quadrature_name(q) == name) return q;
  }
  throw Error("unknown quadrature '" + std::string(name) +
              "' (expected gauss-legendre, riemann-left, riemann-right or riemann-middle)");
}

std::string_view quadrature_name(Quadrature method) {
  switch (method) {
    case Quadrature::gauss_legendre:
      return "gauss-legendre";
    case Quadrature::riemann_left:
      return "riemann-left";
    case Quadrature::riemann_right:
      return "riemann-right";
    case Quadrature::riemann_middle:
      return "riemann-middle";
  }
  return "?";
}

}  // namespace tfdebug::interpret
