#include "tfdebug/robust/edge_cases.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "classes.hpp"
#include "interpret/batching.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::robust {
namespace {

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", v);
  return text;
}

// The q-quantile of values (copied, sorted), linear interpolation.
double quantile_of(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const double at = q * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(at));
  const std::size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (at - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

// The rows through `layer` (or as they are): n x width values.
std::vector<float> features_of(interpret::ForwardModel* layer, std::span<const float> rows,
                               std::int64_t numel, std::int64_t max_batch, std::int64_t* width) {
  if (layer == nullptr) {
    *width = numel;
    return {rows.begin(), rows.end()};
  }
  const std::int64_t n = interpret::detail::row_count(rows, numel, "the rows", true);
  interpret::detail::Batcher batcher(*layer, max_batch);
  *width = layer->output_size();
  std::vector<float> out;
  batcher.forward(
      n, [&](std::int64_t i, std::span<float> p) { std::copy_n(rows.begin() + i * numel, numel, p.begin()); },
      [&](std::int64_t, std::span<const float> o) { out.insert(out.end(), o.begin(), o.end()); });
  return out;
}

}  // namespace

Mahalanobis::Mahalanobis(std::span<const float> rows, std::int64_t d, double shrinkage) : d_(d) {
  const std::int64_t n = interpret::detail::row_count(rows, d, "the training rows", true);
  if (n < 2)
    throw Error("Mahalanobis distance: at least 2 training rows are needed, got " + std::to_string(n));
  if (!(shrinkage >= 0) || !(shrinkage <= 1))
    throw Error("Mahalanobis distance: shrinkage must be in [0, 1], got " + std::to_string(shrinkage));
  const auto ud = static_cast<std::size_t>(d);
  mean_.assign(ud, 0.0);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < ud; ++j) mean_[j] += rows[static_cast<std::size_t>(i) * ud + j];
  for (double& m : mean_) m /= static_cast<double>(n);
  std::vector<double> s(ud * ud, 0.0);
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::size_t a = 0; a < ud; ++a) {
      const double da = rows[static_cast<std::size_t>(i) * ud + a] - mean_[a];
      for (std::size_t b = 0; b <= a; ++b)
        s[a * ud + b] += da * (rows[static_cast<std::size_t>(i) * ud + b] - mean_[b]);
    }
  }
  double trace = 0;
  for (std::size_t a = 0; a < ud; ++a) trace += s[a * ud + a] / static_cast<double>(n - 1);
  for (std::size_t a = 0; a < ud; ++a) {
    for (std::size_t b = 0; b <= a; ++b) {
      s[a * ud + b] = (1 - shrinkage) * s[a * ud + b] / static_cast<double>(n - 1);
      if (a == b) s[a * ud + b] += shrinkage * trace / static_cast<double>(d);
    }
  }
  // Cholesky of the lower triangle.
  cholesky_.assign(ud * ud, 0.0);
  for (std::size_t a = 0; a < ud; ++a) {
    for (std::size_t b = 0; b <= a; ++b) {
      double sum = s[a * ud + b];
      for (std::size_t k = 0; k < b; ++k) sum -= cholesky_[a * ud + k] * cholesky_[b * ud + k];
      if (a == b) {
        if (!(sum > 1e-300))
          throw Error(
              "Mahalanobis distance: the training rows' covariance is singular (raise the shrinkage)");
        cholesky_[a * ud + a] = std::sqrt(sum);
      } else {
        cholesky_[a * ud + b] = sum / cholesky_[b * ud + b];
      }
    }
  }
}

double Mahalanobis::distance(std::span<const float> v) const {
  TFDEBUG_ASSERT(static_cast<std::int64_t>(v.size()) == d_, "a point of the fitted width");
  const auto ud = static_cast<std::size_t>(d_);
  // |L^-1 (v - mean)| by forward substitution.
  std::vector<double> z(ud);
  double sum2 = 0;
  for (std::size_t a = 0; a < ud; ++a) {
    double r = v[a] - mean_[a];
    for (std::size_t k = 0; k < a; ++k) r -= cholesky_[a * ud + k] * z[k];
    z[a] = r / cholesky_[a * ud + a];
    sum2 += z[a] * z[a];
  }
  return std::sqrt(sum2);
}

Coverage neuron_coverage(interpret::ForwardModel& layer, std::span<const float> rows, double threshold,
                         std::int64_t max_batch) {
  const std::int64_t numel = interpret::example_size(layer);
  const std::int64_t n = interpret::detail::row_count(rows, numel, "the rows", true);
  std::vector<bool> on(static_cast<std::size_t>(layer.output_size()), false);
  interpret::detail::Batcher batcher(layer, max_batch);
  batcher.forward(
      n, [&](std::int64_t i, std::span<float> p) { std::copy_n(rows.begin() + i * numel, numel, p.begin()); },
      [&](std::int64_t, std::span<const float> o) {
        for (std::size_t u = 0; u < o.size(); ++u)
          if (o[u] > threshold) on[u] = true;
      });
  Coverage c;
  c.units = static_cast<std::int64_t>(on.size());
  c.covered = static_cast<std::int64_t>(std::count(on.begin(), on.end(), true));
  return c;
}

EdgeCaseReport find_edge_cases(interpret::ForwardModel& model, std::span<const float> rows,
                               std::span<const std::int64_t> labels, const EdgeCaseOptions& o) {
  const std::int64_t numel = interpret::example_size(model);
  const std::int64_t n = interpret::detail::row_count(rows, numel, "the inputs", true);
  const std::int64_t classes = check_classifier(model, labels, n);
  if (!(o.fraction > 0) || !(o.fraction <= 1)) throw Error("edge cases: fraction must be in (0, 1]");
  if (!(o.ood_quantile > 0) || !(o.ood_quantile < 1))
    throw Error("edge cases: ood_quantile must be in (0, 1)");
  const auto un = static_cast<std::size_t>(n);
  EdgeCaseReport r;
  interpret::detail::Batcher batcher(model, o.max_batch);
  const ClassOutputs clean = classify(batcher, rows, n);
  r.predicted = clean.predicted;
  std::vector<std::int64_t> second(un);
  for (std::size_t i = 0; i < un; ++i) {
    const auto out =
        std::span<const float>(clean.outputs).subspan(i * static_cast<std::size_t>(classes), classes);
    std::int64_t s = r.predicted[i] == 0 ? 1 : 0;
    for (std::int64_t k = 0; k < classes; ++k)
      if (k != r.predicted[i] && out[static_cast<std::size_t>(k)] > out[static_cast<std::size_t>(s)]) s = k;
    second[i] = s;
    r.margins.push_back(static_cast<double>(out[static_cast<std::size_t>(r.predicted[i])]) -
                        out[static_cast<std::size_t>(s)]);
  }

  // The margin's gradient: grad f_top - grad f_second, each class's gradient taken over the rows
  // that need it (one Batcher pass per class).
  if (o.gradients && dynamic_cast<interpret::GradientModel*>(&model) != nullptr) {
    std::vector<double> g(un * static_cast<std::size_t>(numel), 0.0);
    for (std::int64_t c = 0; c < classes; ++c) {
      std::vector<std::size_t> need;
      for (std::size_t i = 0; i < un; ++i)
        if (r.predicted[i] == c || second[i] == c) need.push_back(i);
      if (need.empty()) continue;
      batcher.gradient(
          static_cast<std::int64_t>(need.size()), c,
          [&](std::int64_t k, std::span<float> p) {
            std::copy_n(rows.begin() + static_cast<std::ptrdiff_t>(need[static_cast<std::size_t>(k)]) * numel,
                        numel, p.begin());
          },
          [&](std::int64_t k, double, std::span<const float> grad, std::span<const float>) {
            const std::size_t i = need[static_cast<std::size_t>(k)];
            const double sign = r.predicted[i] == c ? 1 : -1;
            for (std::size_t j = 0; j < grad.size(); ++j)
              g[i * static_cast<std::size_t>(numel) + j] += sign * grad[j];
          });
    }
    for (std::size_t i = 0; i < un; ++i) {
      double s = 0;
      for (std::int64_t j = 0; j < numel; ++j)
        s += g[i * static_cast<std::size_t>(numel) + static_cast<std::size_t>(j)] *
             g[i * static_cast<std::size_t>(numel) + static_cast<std::size_t>(j)];
      r.gradient_norms.push_back(std::sqrt(s));
    }
  }

  r.distance_space = o.layer != nullptr ? "layer" : "inputs";
  if (!o.training.empty()) {
    std::int64_t width = 0;
    const std::vector<float> train = features_of(o.layer, o.training, numel, o.max_batch, &width);
    const std::vector<float> here = features_of(o.layer, rows, numel, o.max_batch, &width);
    const Mahalanobis fit(train, width, o.shrinkage);
    std::vector<double> train_distances;
    for (std::size_t i = 0; i < train.size() / static_cast<std::size_t>(width); ++i)
      train_distances.push_back(
          fit.distance(std::span<const float>(train).subspan(i * static_cast<std::size_t>(width), width)));
    r.ood_threshold = quantile_of(train_distances, o.ood_quantile);
    for (std::size_t i = 0; i < un; ++i)
      r.mahalanobis.push_back(
          fit.distance(std::span<const float>(here).subspan(i * static_cast<std::size_t>(width), width)));
  }
  if (o.layer != nullptr) r.coverage = neuron_coverage(*o.layer, rows, o.coverage_threshold, o.max_batch);

  // Flags: each with the number that raised it.
  r.margin_cut = quantile_of(r.margins, o.fraction);
  if (!r.gradient_norms.empty()) r.gradient_cut = quantile_of(r.gradient_norms, 1 - o.fraction);
  for (std::size_t i = 0; i < un; ++i) {
    RiskyCase c;
    c.index = static_cast<std::int64_t>(i);
    if (!labels.empty() && labels[i] != r.predicted[i])
      c.reasons.push_back("misclassified: label " + std::to_string(labels[i]) + ", predicted " +
                          std::to_string(r.predicted[i]));
    if (r.margins[i] <= r.margin_cut)
      c.reasons.push_back("margin " + number(r.margins[i]) + " between class " +
                          std::to_string(r.predicted[i]) + " and " + std::to_string(second[i]) +
                          " (at or below the lowest " + number(100 * o.fraction) + "% cut, " +
                          number(r.margin_cut) + ")");
    if (!r.gradient_norms.empty() && r.gradient_norms[i] >= r.gradient_cut)
      c.reasons.push_back("margin gradient norm " + number(r.gradient_norms[i]) +
                          " (at or above the highest " + number(100 * o.fraction) + "% cut, " +
                          number(r.gradient_cut) + ")");
    if (!r.mahalanobis.empty() && r.mahalanobis[i] > r.ood_threshold)
      c.reasons.push_back("Mahalanobis distance " + number(r.mahalanobis[i]) + " on the " + r.distance_space +
                          " beyond the training rows' " + number(100 * o.ood_quantile) + "th percentile " +
                          number(r.ood_threshold));
    c.flags = static_cast<std::int64_t>(c.reasons.size());
    if (c.flags > 0) r.risky.push_back(std::move(c));
  }
  std::stable_sort(r.risky.begin(), r.risky.end(), [&](const RiskyCase& a, const RiskyCase& b) {
    if (a.flags != b.flags) return a.flags > b.flags;
    return r.margins[static_cast<std::size_t>(a.index)] < r.margins[static_cast<std::size_t>(b.index)];
  });
  return r;
}

}  // namespace tfdebug::robust
