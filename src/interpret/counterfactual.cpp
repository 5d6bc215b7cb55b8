#include "tfdebug/interpret/counterfactual.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "batching.hpp"
#include "feature_constraints.hpp"
#include "mad_scale.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::interpret {
namespace {

struct Descent {
  bool valid = false;
  std::vector<float> x;
  double output = 0;
  double distance = std::numeric_limits<double>::infinity();
};

}  // namespace

Counterfactual wachter_counterfactual(GradientModel& model, std::span<const float> x,
                                      const CounterfactualOptions& o) {
  detail::check_example(model, x, o.target);
  const std::size_t n = x.size();
  if (!(o.tolerance >= 0) || !(o.learning_rate > 0) || !(o.lambda > 0))
    throw Error("tolerance must be >= 0, learning_rate and lambda > 0");
  if (o.iterations < 1 || o.lambda_steps < 1) throw Error("iterations and lambda_steps must be at least 1");
  const std::vector<bool> fixed = detail::fixed_features(n, o.lower, o.upper, o.immutable);
  Counterfactual out;
  out.scale =
      o.distance == Distance::l1_mad ? detail::mad_scales(o.training, n) : std::vector<double>(n, 1.0);
  const auto distance = [&](std::span<const float> p) {
    double d = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const double diff = static_cast<double>(p[j]) - x[j];
      d += o.distance == Distance::l1_mad ? std::fabs(diff) / out.scale[j] : diff * diff;
    }
    return d;
  };
  detail::Batcher batcher(model, 1);
  std::vector<float> gradient(n);
  const auto evaluate = [&](std::span<const float> p) {
    double f = 0;
    batcher.gradient(
        1, o.target, [&](std::int64_t, std::span<float> row) { std::copy(p.begin(), p.end(), row.begin()); },
        [&](std::int64_t, double score, std::span<const float> g, std::span<const float>) {
          f = score;
          std::copy(g.begin(), g.end(), gradient.begin());
        });
    return f;
  };

  // Proximal gradient descent on lambda (f - y')^2 + d from x: the prediction term's gradient
  // step, then the distance's proximal step (soft thresholding towards x for L1; for squared L2
  // the plain gradient), then the immutable features and the bounds.
  const auto descend = [&](double lambda) {
    Descent best;
    std::vector<float> p(x.begin(), x.end());
    double best_loss = std::numeric_limits<double>::infinity();
    std::int64_t since = 0;
    for (std::int64_t it = 0; it < o.iterations; ++it) {
      const double f = evaluate(p);
      const double d = distance(p);
      if (std::fabs(f - o.wanted) <= o.tolerance && d < best.distance) best = {true, p, f, d};
      if (!best.valid && it + 1 == o.iterations) best = {false, p, f, d};
      const double loss = lambda * (f - o.wanted) * (f - o.wanted) + d;
      if (loss < best_loss - 1e-12) {
        best_loss = loss;
        since = 0;
      } else if (++since >= o.early_stop) {
        if (!best.valid) best = {false, p, f, d};
        break;
      }
      for (std::size_t j = 0; j < n; ++j) {
        if (fixed[j]) continue;
        double v = p[j] - o.learning_rate * 2 * lambda * (f - o.wanted) * gradient[j];
        const double from = x[j];
        if (o.distance == Distance::l1_mad) {
          const double t = o.learning_rate / out.scale[j];
          const double delta = v - from;
          v = from + (delta > t ? delta - t : delta < -t ? delta + t : 0.0);
        } else {
          v -= o.learning_rate * 2 * (static_cast<double>(p[j]) - from);
        }
        if (!o.lower.empty()) v = std::max(v, static_cast<double>(o.lower[j]));
        if (!o.upper.empty()) v = std::min(v, static_cast<double>(o.upper[j]));
        p[j] = static_cast<float>(v);
      }
    }
    return best;
  };

  // The lambda schedule: x10 (or /10) while only one side is known, then bisection.
  double lambda = o.lambda, low = 0, high = 0;
  Descent answer;
  for (std::int64_t step = 0; step < o.lambda_steps; ++step) {
    const Descent d = descend(lambda);
    if (d.valid) {
      if (!answer.valid || d.distance < answer.distance) {
        answer = d;
        out.lambda = lambda;
      }
      high = lambda;
      lambda = low > 0 ? (low + high) / 2 : lambda / 10;
    } else {
      if (!answer.valid) {
        answer = d;
        out.lambda = lambda;
      }
      low = lambda;
      lambda = high > 0 ? (low + high) / 2 : lambda * 10;
    }
  }
  out.valid = answer.valid;
  out.x = answer.x;
  out.output = answer.output;
  out.distance = distance(out.x);
  for (std::size_t j = 0; j < n; ++j) out.changed += out.x[j] != x[j];
  out.evaluations = batcher.evaluations();
  return out;
}

}  // namespace tfdebug::interpret
