#include "tfdebug/interpret/evaluation.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "batching.hpp"
#include "random.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::interpret {
namespace {

void check_attributions(std::span<const float> x, std::span<const double> attributions) {
  if (attributions.size() != x.size()) {
    throw Error("the attributions have " + std::to_string(attributions.size()) + " values; the input has " +
                std::to_string(x.size()));
  }
}

double softmax_at(std::span<const float> outputs, std::int64_t target) {
  const float top = *std::max_element(outputs.begin(), outputs.end());
  double total = 0;
  for (const float o : outputs) total += std::exp(static_cast<double>(o) - top);
  return std::exp(static_cast<double>(outputs[static_cast<std::size_t>(target)]) - top) / total;
}

// Deletion (from x towards the reference) and insertion (from the reference towards x) share one
// loop: point k has the first round(k / steps * n) inputs of `order` taken from `to`, the rest
// from `from`.
Curve curve(ForwardModel& model, std::span<const float> from, std::span<const float> to, std::int64_t target,
            std::span<const double> attributions, const CurveOptions& options) {
  if (options.steps < 1) throw Error("steps must be at least 1, got " + std::to_string(options.steps));
  const std::size_t n = from.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return attributions[a] > attributions[b]; });
  Curve c;
  c.fraction.resize(static_cast<std::size_t>(options.steps + 1));
  c.output.resize(c.fraction.size());
  detail::Batcher batcher(model, options.max_batch);
  batcher.forward(
      options.steps + 1,
      [&](std::int64_t k, std::span<float> row) {
        const auto taken = static_cast<std::size_t>(std::llround(
            static_cast<double>(k) / static_cast<double>(options.steps) * static_cast<double>(n)));
        std::copy(from.begin(), from.end(), row.begin());
        for (std::size_t i = 0; i < taken; ++i) row[order[i]] = to[order[i]];
        c.fraction[static_cast<std::size_t>(k)] = static_cast<double>(taken) / static_cast<double>(n);
      },
      [&](std::int64_t k, std::span<const float> outputs) {
        c.output[static_cast<std::size_t>(k)] =
            options.softmax ? softmax_at(outputs, target) : outputs[static_cast<std::size_t>(target)];
      });
  for (std::size_t k = 1; k < c.output.size(); ++k)
    c.area += (c.fraction[k] - c.fraction[k - 1]) * (c.output[k] + c.output[k - 1]) / 2;
  return c;
}

std::vector<float> reference_of(const CurveOptions& options, std::size_t n) {
  if (options.reference.empty()) return std::vector<float>(n, 0.0f);
  if (options.reference.size() != n) {
    throw Error("the reference has " + std::to_string(options.reference.size()) + " values; the input has " +
                std::to_string(n));
  }
  return options.reference;
}

}  // namespace

double infidelity(ForwardModel& model, std::span<const float> x, std::int64_t target,
                  std::span<const double> attributions, const InfidelityOptions& options) {
  detail::check_example(model, x, target);
  check_attributions(x, attributions);
  if (options.samples < 1) throw Error("samples must be at least 1, got " + std::to_string(options.samples));
  const std::size_t n = x.size();
  // Row 0 is x; row s + 1 is x - I_s, I_s ~ N(0, stdev^2) from stream s.
  std::vector<double> dot(static_cast<std::size_t>(options.samples), 0.0);  // I . phi
  std::vector<double> output(static_cast<std::size_t>(options.samples + 1), 0.0);
  detail::Batcher batcher(model, options.max_batch);
  batcher.forward(
      options.samples + 1,
      [&](std::int64_t r, std::span<float> row) {
        if (r == 0) {
          std::copy(x.begin(), x.end(), row.begin());
          return;
        }
        detail::Stream stream(options.seed, static_cast<std::uint64_t>(r - 1));
        double d = 0;
        for (std::size_t j = 0; j < n; ++j) {
          const double i = options.stdev * stream.normal();
          d += i * attributions[j];
          row[j] = static_cast<float>(x[j] - i);
        }
        dot[static_cast<std::size_t>(r - 1)] = d;
      },
      [&](std::int64_t r, std::span<const float> outputs) {
        output[static_cast<std::size_t>(r)] = outputs[static_cast<std::size_t>(target)];
      });
  double beta = 1;
  if (options.normalize) {
    double num = 0, den = 0;
    for (std::int64_t s = 0; s < options.samples; ++s) {
      const double change = output[0] - output[static_cast<std::size_t>(s + 1)];
      num += dot[static_cast<std::size_t>(s)] * change;
      den += dot[static_cast<std::size_t>(s)] * dot[static_cast<std::size_t>(s)];
    }
    beta = den > 0 ? num / den : 0;
  }
  double total = 0;
  for (std::int64_t s = 0; s < options.samples; ++s) {
    const double error =
        beta * dot[static_cast<std::size_t>(s)] - (output[0] - output[static_cast<std::size_t>(s + 1)]);
    total += error * error;
  }
  return total / static_cast<double>(options.samples);
}

double sensitivity_max(const std::function<std::vector<double>(std::span<const float>)>& explain,
                       std::span<const float> x, const SensitivityOptions& options) {
  if (options.samples < 1) throw Error("samples must be at least 1, got " + std::to_string(options.samples));
  if (!(options.radius >= 0)) throw Error("radius must be >= 0");
  const std::vector<double> base = explain(x);
  check_attributions(x, base);
  double norm = 0;
  for (const double v : base) norm += v * v;
  norm = std::sqrt(norm);
  double worst = 0;
  std::vector<float> moved(x.size());
  for (std::int64_t s = 0; s < options.samples; ++s) {
    detail::Stream stream(options.seed, static_cast<std::uint64_t>(s));
    for (std::size_t j = 0; j < x.size(); ++j)
      moved[j] = static_cast<float>(x[j] + options.radius * (2 * stream.uniform() - 1));
    const std::vector<double> other = explain(moved);
    check_attributions(x, other);
    double change = 0;
    for (std::size_t j = 0; j < x.size(); ++j) change += (other[j] - base[j]) * (other[j] - base[j]);
    worst = std::max(worst, norm > 0 ? std::sqrt(change) / norm : std::sqrt(change));
  }
  return worst;
}

Curve deletion_curve(ForwardModel& model, std::span<const float> x, std::int64_t target,
                     std::span<const double> attributions, const CurveOptions& options) {
  detail::check_example(model, x, target);
  check_attributions(x, attributions);
  const std::vector<float> reference = reference_of(options, x.size());
  return curve(model, x, reference, target, attributions, options);
}

Curve insertion_curve(ForwardModel& model, std::span<const float> x, std::int64_t target,
                      std::span<const double> attributions, const CurveOptions& options) {
  detail::check_example(model, x, target);
  check_attributions(x, attributions);
  const std::vector<float> reference = reference_of(options, x.size());
  return curve(model, reference, x, target, attributions, options);
}

}  // namespace tfdebug::interpret
