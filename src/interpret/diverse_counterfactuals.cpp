#include "tfdebug/interpret/diverse_counterfactuals.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <string>

#include "batching.hpp"
#include "categorical_features.hpp"
#include "feature_constraints.hpp"
#include "linear_solve.hpp"
#include "mad_scale.hpp"
#include "random.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::interpret {
namespace {

// det of a k x k matrix (row-major) by Gaussian elimination with partial pivoting.
double determinant(std::vector<double> a, std::size_t k) {
  double det = 1;
  for (std::size_t col = 0; col < k; ++col) {
    std::size_t pivot = col;
    for (std::size_t r = col + 1; r < k; ++r)
      if (std::fabs(a[r * k + col]) > std::fabs(a[pivot * k + col])) pivot = r;
    if (a[pivot * k + col] == 0) return 0;
    if (pivot != col) {
      for (std::size_t c = 0; c < k; ++c) std::swap(a[col * k + c], a[pivot * k + c]);
      det = -det;
    }
    det *= a[col * k + col];
    for (std::size_t r = col + 1; r < k; ++r) {
      const double f = a[r * k + col] / a[col * k + col];
      for (std::size_t c = col; c < k; ++c) a[r * k + c] -= f * a[col * k + c];
    }
  }
  return det;
}

// How a feature counts in a distance: scaled L1, a mismatch (a categorical feature: 0 or 1), or
// not at all (a categorical feature inside the search, whose distance comes from its weights).
enum class Counts : std::uint8_t { scaled, mismatch, skipped };

// K_ij = 1 / (1 + d(p_i, p_j) + extra_ij), d summed over the features as `counts` says (empty:
// all scaled), + jitter on the diagonal.
std::vector<double> kernel(std::span<const float> points, std::size_t k, std::span<const double> scale,
                           double jitter, const std::vector<Counts>& counts = {},
                           const std::vector<double>& extra = {}) {
  const std::size_t n = scale.size();
  std::vector<double> kk(k * k);
  for (std::size_t i = 0; i < k; ++i) {
    for (std::size_t j = i; j < k; ++j) {
      double d = extra.empty() ? 0.0 : extra[i * k + j];
      for (std::size_t l = 0; l < n; ++l) {
        const Counts c = counts.empty() ? Counts::scaled : counts[l];
        const double diff = std::fabs(static_cast<double>(points[i * n + l]) - points[j * n + l]);
        d += c == Counts::scaled ? diff / scale[l] : c == Counts::mismatch ? (diff != 0 ? 1.0 : 0.0) : 0.0;
      }
      kk[i * k + j] = kk[j * k + i] = 1 / (1 + d) + (i == j ? jitter : 0);
    }
  }
  return kk;
}

double sign(double v) {
  return v > 0 ? 1 : v < 0 ? -1 : 0;
}

}  // namespace

double diversity_determinant(std::span<const float> points, std::int64_t count, std::span<const double> scale,
                             double jitter) {
  if (count < 1 || points.size() != static_cast<std::size_t>(count) * scale.size())
    throw Error("diversity_determinant: " + std::to_string(points.size()) + " values are not " +
                std::to_string(count) + " points of " + std::to_string(scale.size()));
  const auto k = static_cast<std::size_t>(count);
  return determinant(kernel(points, k, scale, jitter), k);
}

DiverseCounterfactuals diverse_counterfactuals(GradientModel& model, std::span<const float> x,
                                               const DiverseCounterfactualOptions& o) {
  const std::int64_t classes = model.output_size();
  const bool binary = classes == 1;
  if (binary ? (o.wanted_class != 0 && o.wanted_class != 1)
             : (o.wanted_class < 0 || o.wanted_class >= classes)) {
    throw Error("wanted class " + std::to_string(o.wanted_class) + " is not a class of the model (" +
                (binary ? std::string("one output, a logit: class 0 or 1")
                        : std::to_string(classes) + " outputs: 0.." + std::to_string(classes - 1)) +
                ")");
  }
  const std::int64_t target = binary ? 0 : o.wanted_class;
  detail::check_example(model, x, target);
  if (o.count < 1) throw Error("count must be at least 1, got " + std::to_string(o.count));
  if (!(o.learning_rate > 0) || o.min_iterations < 0 || o.max_iterations < 1 ||
      o.min_iterations > o.max_iterations)
    throw Error("learning_rate must be > 0 and 0 <= min_iterations <= max_iterations, max_iterations >= 1");
  const std::size_t n = x.size();
  const auto k = static_cast<std::size_t>(o.count);
  std::vector<bool> fixed = detail::fixed_features(n, o.lower, o.upper, o.immutable);
  DiverseCounterfactuals out;
  out.scale = detail::mad_scales(o.training, n);
  const std::vector<double>& scale = out.scale;
  // The mutable categorical features: moved through their weights q (one per allowed value, at
  // q_offset[c] in each counterfactual's block of `weights` values), never through u.
  std::vector<detail::Categorical> categories;
  for (detail::Categorical& c : detail::categorical_features(x, o.training, o.categorical))
    if (!fixed[c.feature]) categories.push_back(std::move(c));
  std::vector<Counts> search_counts(n, Counts::scaled), metric_counts(n, Counts::scaled);
  std::vector<std::size_t> q_offset;
  std::size_t weights = 0;
  for (const detail::Categorical& c : categories) {
    search_counts[c.feature] = Counts::skipped;
    metric_counts[c.feature] = Counts::mismatch;
    out.categorical.push_back(static_cast<std::int64_t>(c.feature));
    out.allowed.push_back(c.values);
    q_offset.push_back(weights);
    weights += c.values.size();
  }
  for (const detail::Categorical& c : categories) fixed[c.feature] = true;  // u leaves them alone

  // The counterfactuals as c = x + scale * u: u is what Adam moves, in MADs.
  std::vector<double> u(k * n, 0.0);
  std::vector<float> points(k * n);
  const auto place = [&](std::size_t i, std::size_t j) {
    double c = x[j] + scale[j] * u[i * n + j];
    if (!o.lower.empty()) c = std::max(c, static_cast<double>(o.lower[j]));
    if (!o.upper.empty()) c = std::min(c, static_cast<double>(o.upper[j]));
    points[i * n + j] = fixed[j] ? x[j] : static_cast<float>(c);
    u[i * n + j] = fixed[j] ? 0.0 : (c - x[j]) / scale[j];
  };
  // A categorical feature's value in the search: sum_v q_v v (at the end, one of the values).
  std::vector<double> q(k * weights, 0.0);
  const auto place_category = [&](std::size_t i, std::size_t c) {
    const detail::Categorical& cat = categories[c];
    double v = 0;
    for (std::size_t a = 0; a < cat.values.size(); ++a) v += q[i * weights + q_offset[c] + a] * cat.values[a];
    points[i * n + cat.feature] = static_cast<float>(v);
  };
  for (std::size_t i = 0; i < k; ++i) {
    detail::Stream stream(o.seed, i);
    for (std::size_t j = 0; j < n; ++j) {
      if (!fixed[j]) u[i * n + j] = o.init_noise * stream.normal();
      place(i, j);
    }
    // x's one-hot, each weight nudged by up to 0.1 (after the stream's continuous draws).
    for (std::size_t c = 0; c < categories.size(); ++c) {
      for (std::size_t a = 0; a < categories[c].values.size(); ++a)
        q[i * weights + q_offset[c] + a] =
            std::min(1.0, (a == categories[c].input ? 1.0 : 0.0) + 0.1 * stream.uniform());
      place_category(i, c);
    }
  }

  // The margin of each point (how far into the wanted class) and its gradient, by one forward
  // call for every output (multi-class: who is the runner-up), one gradient call for the wanted
  // output, and one per distinct runner-up over the points it is the runner-up of.
  detail::Batcher batcher(model, o.count);
  std::vector<double> margin(k);
  std::vector<double> margin_gradient(k * n);
  std::vector<float> outputs(k * static_cast<std::size_t>(classes));
  const auto evaluate = [&](std::span<const float> at, std::size_t rows) {
    const auto row = [&](std::size_t i) { return at.subspan(i * n, n); };
    if (!binary) {
      batcher.forward(
          static_cast<std::int64_t>(rows),
          [&](std::int64_t i, std::span<float> r) {
            std::copy_n(row(static_cast<std::size_t>(i)).begin(), n, r.begin());
          },
          [&](std::int64_t i, std::span<const float> y) {
            std::copy(y.begin(), y.end(), outputs.begin() + i * classes);
          });
    }
    const double s = binary && o.wanted_class == 0 ? -1 : 1;
    batcher.gradient(
        static_cast<std::int64_t>(rows), target,
        [&](std::int64_t i, std::span<float> r) {
          std::copy_n(row(static_cast<std::size_t>(i)).begin(), n, r.begin());
        },
        [&](std::int64_t i, double score, std::span<const float> g, std::span<const float>) {
          const auto ii = static_cast<std::size_t>(i);
          margin[ii] = s * score;
          for (std::size_t j = 0; j < n; ++j) margin_gradient[ii * n + j] = s * g[j];
          if (binary) outputs[ii] = static_cast<float>(score);
        });
    if (binary) return;
    std::map<std::int64_t, std::vector<std::size_t>> runner_up;
    for (std::size_t i = 0; i < rows; ++i) {
      std::int64_t best = -1;
      for (std::int64_t c = 0; c < classes; ++c) {
        if (c == target) continue;
        if (best < 0 || outputs[i * static_cast<std::size_t>(classes) + static_cast<std::size_t>(c)] >
                            outputs[i * static_cast<std::size_t>(classes) + static_cast<std::size_t>(best)])
          best = c;
      }
      runner_up[best].push_back(i);
    }
    for (const auto& entry : runner_up) {
      const std::int64_t other = entry.first;
      const auto& members = entry.second;  // a plain reference: lambdas may capture it (clang 14)
      batcher.gradient(
          static_cast<std::int64_t>(members.size()), other,
          [&](std::int64_t m, std::span<float> r) {
            std::copy_n(row(members[static_cast<std::size_t>(m)]).begin(), n, r.begin());
          },
          [&](std::int64_t m, double score, std::span<const float> g, std::span<const float>) {
            const std::size_t i = members[static_cast<std::size_t>(m)];
            margin[i] -= score;
            for (std::size_t j = 0; j < n; ++j) margin_gradient[i * n + j] -= g[j];
          });
    }
  };
  const auto valid = [&](std::size_t i) { return margin[i] > 0; };

  // Adam on u (torch's defaults but the learning rate).
  constexpr double kBeta1 = 0.9, kBeta2 = 0.999, kEpsilon = 1e-8, kJitter = 1e-4;
  std::vector<double> m1(k * n, 0.0), m2(k * n, 0.0), grad(k * n);
  std::vector<double> q1(k * weights, 0.0), q2(k * weights, 0.0), q_grad(k * weights);
  constexpr double kCategoricalPenalty = 0.1;  // DiCE's
  double previous_loss = std::numeric_limits<double>::infinity();
  const double proximity_unit = o.proximity_weight / static_cast<double>(n * k);
  std::int64_t it = 0;
  for (; it < o.max_iterations; ++it) {
    evaluate(points, k);
    double loss = 0;
    bool all_valid = true;
    std::fill(grad.begin(), grad.end(), 0.0);
    std::fill(q_grad.begin(), q_grad.end(), 0.0);
    for (std::size_t i = 0; i < k; ++i) {
      all_valid = all_valid && valid(i);
      if (margin[i] < 1) {
        loss += (1 - margin[i]) / static_cast<double>(k);
        for (std::size_t j = 0; j < n; ++j)
          grad[i * n + j] -= margin_gradient[i * n + j] * scale[j] / static_cast<double>(k);
      }
      for (std::size_t j = 0; j < n; ++j) {
        loss += proximity_unit * std::fabs(u[i * n + j]);
        grad[i * n + j] += proximity_unit * sign(u[i * n + j]);
      }
      // Categorical weights: the hinge through sum_v q_v v, proximity as half the L1 distance
      // from x's one-hot, and the penalty that keeps the weights summing to 1.
      for (std::size_t c = 0; c < categories.size(); ++c) {
        const detail::Categorical& cat = categories[c];
        const double through =
            margin[i] < 1 ? -margin_gradient[i * n + cat.feature] / static_cast<double>(k) : 0.0;
        double total = 0;
        for (std::size_t a = 0; a < cat.values.size(); ++a) total += q[i * weights + q_offset[c] + a];
        loss += kCategoricalPenalty * (total - 1) * (total - 1);
        for (std::size_t a = 0; a < cat.values.size(); ++a) {
          const std::size_t at = i * weights + q_offset[c] + a;
          const double away = q[at] - (a == cat.input ? 1.0 : 0.0);
          loss += proximity_unit * 0.5 * std::fabs(away);
          q_grad[at] = through * cat.values[a] + proximity_unit * 0.5 * sign(away) +
                       2 * kCategoricalPenalty * (total - 1);
        }
      }
    }
    if (k > 1 && o.diversity_weight != 0) {
      // d det K / d K_ij = det K (K^-1)_ji; K_ij = 1 / (1 + d_ij) moves with -K_ij^2 d d_ij, and
      // d_ij = sum_l |u_il - u_jl| in these units. K is symmetric: each pair counts twice.
      // Categorical features count half the L1 distance between their weights.
      std::vector<double> extra(k * k, 0.0);
      for (std::size_t i = 0; i < k; ++i)
        for (std::size_t j = 0; j < k; ++j)
          for (std::size_t a = 0; a < weights; ++a)
            extra[i * k + j] += 0.5 * std::fabs(q[i * weights + a] - q[j * weights + a]);
      const std::vector<double> kk = kernel(points, k, scale, kJitter, search_counts, extra);
      const double det = determinant(kk, k);
      loss -= o.diversity_weight * det;
      std::vector<double> inverse(k * k);
      for (std::size_t c = 0; c < k; ++c) {
        std::vector<double> e(k, 0.0);
        e[c] = 1;
        const std::vector<double> col = detail::solve(kk, e, k, "DiCE: the diversity kernel is singular");
        for (std::size_t r = 0; r < k; ++r) inverse[r * k + c] = col[r];
      }
      for (std::size_t i = 0; i < k; ++i) {
        for (std::size_t j = 0; j < k; ++j) {
          if (i == j) continue;
          const double f = o.diversity_weight * 2 * det * inverse[i * k + j] * kk[i * k + j] * kk[i * k + j];
          for (std::size_t l = 0; l < n; ++l) grad[i * n + l] += f * sign(u[i * n + l] - u[j * n + l]);
          for (std::size_t a = 0; a < weights; ++a)
            q_grad[i * weights + a] += f * 0.5 * sign(q[i * weights + a] - q[j * weights + a]);
        }
      }
    }
    if (it >= o.min_iterations && all_valid && std::fabs(loss - previous_loss) < o.loss_tolerance) break;
    previous_loss = loss;
    const double step = static_cast<double>(it + 1);
    const double correction1 = 1 - std::pow(kBeta1, step), correction2 = 1 - std::pow(kBeta2, step);
    for (std::size_t i = 0; i < k; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        if (fixed[j]) continue;  // DiCE#355: features_to_vary honoured by the gradient method too
        const std::size_t a = i * n + j;
        m1[a] = kBeta1 * m1[a] + (1 - kBeta1) * grad[a];
        m2[a] = kBeta2 * m2[a] + (1 - kBeta2) * grad[a] * grad[a];
        u[a] -= o.learning_rate * (m1[a] / correction1) / (std::sqrt(m2[a] / correction2) + kEpsilon);
        place(i, j);
      }
      for (std::size_t a = i * weights; a < (i + 1) * weights; ++a) {
        q1[a] = kBeta1 * q1[a] + (1 - kBeta1) * q_grad[a];
        q2[a] = kBeta2 * q2[a] + (1 - kBeta2) * q_grad[a] * q_grad[a];
        q[a] -= o.learning_rate * (q1[a] / correction1) / (std::sqrt(q2[a] / correction2) + kEpsilon);
        q[a] = std::clamp(q[a], 0.0, 1.0);
      }
      for (std::size_t c = 0; c < categories.size(); ++c) place_category(i, c);
    }
  }
  out.iterations = it;

  // Each categorical feature takes its largest weight's value; a counterfactual left outside the
  // wanted class takes the single categorical change that raises its margin most, while one does.
  for (std::size_t i = 0; i < k; ++i) {
    for (std::size_t c = 0; c < categories.size(); ++c) {
      const auto first = q.begin() + static_cast<std::ptrdiff_t>(i * weights + q_offset[c]);
      const auto best =
          std::max_element(first, first + static_cast<std::ptrdiff_t>(categories[c].values.size()));
      points[i * n + categories[c].feature] = categories[c].values[static_cast<std::size_t>(best - first)];
    }
  }
  evaluate(points, k);
  std::vector<float> one(n);
  if (!categories.empty()) {
    std::vector<double> before(margin.begin(), margin.end());
    for (std::size_t i = 0; i < k; ++i) {
      std::copy_n(points.begin() + static_cast<std::ptrdiff_t>(i * n), n, one.begin());
      double current = before[i];
      for (std::size_t round = 0; round < categories.size() && !(current > 0); ++round) {
        double best = current;
        std::size_t best_feature = n;
        float best_value = 0;
        for (const detail::Categorical& cat : categories) {
          const float kept = one[cat.feature];
          for (const float v : cat.values) {
            if (v == kept) continue;
            one[cat.feature] = v;
            evaluate(one, 1);
            if (margin[0] > best) best = margin[0], best_feature = cat.feature, best_value = v;
          }
          one[cat.feature] = kept;
        }
        if (best_feature == n) break;  // no single change helps
        one[best_feature] = best_value;
        current = best;
      }
      std::copy(one.begin(), one.end(), points.begin() + static_cast<std::ptrdiff_t>(i * n));
    }
    evaluate(points, k);
  }

  // Post-hoc sparsity: small changes of a valid counterfactual back to x's value, one at a time,
  // the smallest first, each kept only if the counterfactual stays valid.
  std::vector<bool> is_valid(k);
  for (std::size_t i = 0; i < k; ++i) is_valid[i] = valid(i);
  for (std::size_t i = 0; i < k; ++i) {
    if (!is_valid[i]) continue;
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return std::fabs(u[i * n + a]) < std::fabs(u[i * n + b]);
    });
    std::copy_n(points.begin() + static_cast<std::ptrdiff_t>(i * n), n, one.begin());
    for (const std::size_t j : order) {
      if (one[j] == x[j] || !(std::fabs(u[i * n + j]) < o.sparsity_threshold)) continue;
      const float kept = one[j];
      one[j] = x[j];
      evaluate(one, 1);
      if (!valid(0)) one[j] = kept;
    }
    std::copy(one.begin(), one.end(), points.begin() + static_cast<std::ptrdiff_t>(i * n));
  }
  evaluate(points, k);

  // The set and its metrics.
  for (std::size_t i = 0; i < k; ++i) {
    DiverseCounterfactual c;
    c.x.assign(points.begin() + static_cast<std::ptrdiff_t>(i * n),
               points.begin() + static_cast<std::ptrdiff_t>((i + 1) * n));
    c.valid = valid(i);
    c.outputs.assign(outputs.begin() + static_cast<std::ptrdiff_t>(i) * classes,
                     outputs.begin() + static_cast<std::ptrdiff_t>(i + 1) * classes);
    for (std::size_t j = 0; j < n; ++j) {
      c.changed += c.x[j] != x[j];
      c.distance += metric_counts[j] == Counts::mismatch
                        ? (c.x[j] != x[j] ? 1.0 : 0.0)
                        : std::fabs(static_cast<double>(c.x[j]) - x[j]) / scale[j];
    }
    out.validity += c.valid;
    out.proximity += c.distance / static_cast<double>(n);
    out.sparsity += static_cast<double>(c.changed);
    out.counterfactuals.push_back(std::move(c));
  }
  out.validity /= static_cast<double>(k);
  out.proximity /= static_cast<double>(k);
  out.sparsity /= static_cast<double>(k);
  std::size_t pairs = 0;
  for (std::size_t i = 0; i < k; ++i) {
    for (std::size_t j = i + 1; j < k; ++j, ++pairs) {
      double d = 0, differ = 0;
      for (std::size_t l = 0; l < n; ++l) {
        const double diff = std::fabs(static_cast<double>(points[i * n + l]) - points[j * n + l]);
        d += metric_counts[l] == Counts::mismatch ? (diff != 0 ? 1.0 : 0.0) : diff / scale[l];
        differ += diff != 0;
      }
      out.diversity += d / static_cast<double>(n);
      out.count_diversity += differ / static_cast<double>(n);
    }
  }
  if (pairs > 0) {
    out.diversity /= static_cast<double>(pairs);
    out.count_diversity /= static_cast<double>(pairs);
  }
  out.determinant = determinant(kernel(points, k, scale, 0, metric_counts), k);
  out.evaluations = batcher.evaluations();
  return out;
}

}  // namespace tfdebug::interpret
