#include "tfdebug/interpret/gradient_attribution.hpp"

#include <cmath>
#include <string>
#include <tuple>
#include <utility>

#include "batching.hpp"
#include "random.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::interpret {
namespace {

using detail::Batcher;

std::vector<float> baseline_or_zeros(const std::vector<float>& baseline, std::size_t numel,
                                     const char* what) {
  if (baseline.empty()) return std::vector<float>(numel, 0.0f);
  if (baseline.size() != numel) {
    throw Error(std::string(what) + " has " + std::to_string(baseline.size()) + " values; the input has " +
                std::to_string(numel));
  }
  return baseline;
}

// The target output of one example.
double output_at(Batcher& batcher, std::span<const float> x, std::int64_t target) {
  double out = 0;
  batcher.forward(
      1, [&](std::int64_t, std::span<float> row) { std::copy(x.begin(), x.end(), row.begin()); },
      [&](std::int64_t, std::span<const float> outputs) { out = outputs[static_cast<std::size_t>(target)]; });
  return out;
}

// The target outputs of two examples, in one model call.
std::pair<double, double> outputs_at(Batcher& batcher, std::span<const float> a, std::span<const float> b,
                                     std::int64_t target) {
  double out[2] = {0, 0};
  batcher.forward(
      2,
      [&](std::int64_t i, std::span<float> row) {
        const std::span<const float> from = i == 0 ? a : b;
        std::copy(from.begin(), from.end(), row.begin());
      },
      [&](std::int64_t i, std::span<const float> outputs) {
        out[i] = outputs[static_cast<std::size_t>(target)];
      });
  return {out[0], out[1]};
}

Attribution start(const char* method, const ForwardModel& model) {
  Attribution a;
  a.method = method;
  a.shape = model.input_shape();
  return a;
}

// The integral of the target's gradient along the straight line from `from` to `to`, times
// (to - from), added into `into`: one segment of (path) Integrated Gradients.
void integrate_segment(Batcher& batcher, std::span<const float> from, std::span<const float> to,
                       std::int64_t target, const Rule& rule, std::vector<double>& into) {
  const std::size_t numel = from.size();
  std::vector<double> integral(numel, 0.0);
  batcher.gradient(
      static_cast<std::int64_t>(rule.nodes.size()), target,
      [&](std::int64_t k, std::span<float> row) {
        const double alpha = rule.nodes[static_cast<std::size_t>(k)];
        for (std::size_t j = 0; j < numel; ++j)
          row[j] = static_cast<float>(from[j] + alpha * (static_cast<double>(to[j]) - from[j]));
      },
      [&](std::int64_t k, double, std::span<const float> gradient, std::span<const float>) {
        const double w = rule.weights[static_cast<std::size_t>(k)];
        for (std::size_t j = 0; j < numel; ++j) integral[j] += w * gradient[j];
      });
  for (std::size_t j = 0; j < numel; ++j) into[j] += (static_cast<double>(to[j]) - from[j]) * integral[j];
}

}  // namespace

std::int64_t example_size(const ForwardModel& model) {
  std::int64_t n = 1;
  for (const std::int64_t d : model.input_shape()) n *= d;
  return n;
}

Attribution gradient_x_input(GradientModel& model, std::span<const float> x, std::int64_t target) {
  detail::check_example(model, x, target);
  Batcher batcher(model, 1);
  Attribution a = start("gradient-x-input", model);
  a.values.resize(x.size());
  batcher.gradient(
      1, target, [&](std::int64_t, std::span<float> row) { std::copy(x.begin(), x.end(), row.begin()); },
      [&](std::int64_t, double score, std::span<const float> gradient, std::span<const float>) {
        a.output = score;
        for (std::size_t j = 0; j < x.size(); ++j) a.values[j] = static_cast<double>(x[j]) * gradient[j];
      });
  a.evaluations = batcher.evaluations();
  return a;
}

Attribution integrated_gradients(GradientModel& model, std::span<const float> x, std::int64_t target,
                                 const IntegratedGradientsOptions& options) {
  return path_integrated_gradients(model, x, target, {std::vector<float>(x.begin(), x.end())}, options);
}

Attribution path_integrated_gradients(GradientModel& model, std::span<const float> x, std::int64_t target,
                                      const std::vector<std::vector<float>>& waypoints,
                                      const IntegratedGradientsOptions& options) {
  detail::check_example(model, x, target);
  if (waypoints.empty()) throw Error("the path needs at least one point after the baseline: x itself");
  for (std::size_t p = 0; p < waypoints.size(); ++p) {
    if (waypoints[p].size() != x.size()) {
      throw Error("point " + std::to_string(p) + " of the path has " + std::to_string(waypoints[p].size()) +
                  " values; the input has " + std::to_string(x.size()));
    }
  }
  for (std::size_t j = 0; j < x.size(); ++j) {
    const float end = waypoints.back()[j];
    if (end != x[j] && !(std::isnan(end) && std::isnan(x[j])))
      throw Error("the path must end at the input (value " + std::to_string(j) + " differs)");
  }
  const std::vector<float> baseline = baseline_or_zeros(options.baseline, x.size(), "the baseline");
  const Rule rule = quadrature(options.method, options.steps);
  Batcher batcher(model, options.max_batch);
  Attribution a = start(waypoints.size() == 1 ? "integrated-gradients" : "path-integrated-gradients", model);
  a.values.assign(x.size(), 0.0);
  std::span<const float> from = baseline;
  for (const std::vector<float>& point : waypoints) {
    integrate_segment(batcher, from, point, target, rule, a.values);
    from = point;
  }
  std::tie(a.output, a.reference_output) = outputs_at(batcher, x, baseline, target);
  a.delta = a.sum() - (a.output - a.reference_output);
  a.evaluations = batcher.evaluations();
  return a;
}

Attribution smoothgrad(GradientModel& model, std::span<const float> x, std::int64_t target,
                       const SmoothGradOptions& options) {
  detail::check_example(model, x, target);
  if (options.samples < 1) throw Error("samples must be at least 1, got " + std::to_string(options.samples));
  if (!(options.stdev >= 0) || !std::isfinite(options.stdev))
    throw Error("stdev must be a finite number >= 0, got " + std::to_string(options.stdev));
  const std::size_t numel = x.size();
  // Sample s is x plus the noise of stream s (Note [Seeded streams]).
  const auto noisy = [&](std::int64_t sample, std::span<float> row) {
    detail::Stream stream(options.seed, static_cast<std::uint64_t>(sample));
    for (std::size_t j = 0; j < numel; ++j)
      row[j] = static_cast<float>(x[j] + (options.stdev > 0 ? options.stdev * stream.normal() : 0.0));
  };

  // Welford's running mean and variance of each element's attribution over the samples.
  std::vector<double> mean(numel, 0.0), m2(numel, 0.0), mean_sq(numel, 0.0);
  std::int64_t count = 0;
  const auto add = [&](std::span<const double> sample) {
    ++count;
    const double inverse = 1 / static_cast<double>(count);
    for (std::size_t j = 0; j < numel; ++j) {
      const double d = sample[j] - mean[j];
      mean[j] += d * inverse;
      m2[j] += d * (sample[j] - mean[j]);
      mean_sq[j] += (sample[j] * sample[j] - mean_sq[j]) * inverse;
    }
  };
  Batcher batcher(model, options.max_batch);
  std::int64_t evaluations = 0;
  if (options.base == BaseMethod::integrated_gradients) {
    std::vector<float> xs(numel);
    for (std::int64_t s = 0; s < options.samples; ++s) {
      noisy(s, xs);
      IntegratedGradientsOptions ig = options.integrated;
      ig.max_batch = options.max_batch;
      const Attribution one = integrated_gradients(model, xs, target, ig);
      evaluations += one.evaluations;
      add(one.values);
    }
  } else {
    std::vector<double> sample(numel);
    batcher.gradient(
        options.samples, target, noisy,
        [&](std::int64_t, double, std::span<const float> gradient, std::span<const float> point) {
          for (std::size_t j = 0; j < numel; ++j)
            sample[j] = options.base == BaseMethod::gradient_x_input
                            ? static_cast<double>(point[j]) * gradient[j]
                            : static_cast<double>(gradient[j]);
          add(sample);
        });
  }
  Attribution a = start("smoothgrad", model);
  switch (options.kind) {
    case NoiseTunnel::smoothgrad:
      a.values = mean;
      break;
    case NoiseTunnel::smoothgrad_sq:
      a.values = mean_sq;
      break;
    case NoiseTunnel::vargrad:
      a.values.resize(numel);
      for (std::size_t j = 0; j < numel; ++j) a.values[j] = m2[j] / static_cast<double>(count);  // population
      break;
  }
  if (options.kind == NoiseTunnel::smoothgrad && count > 1) {
    a.variance.resize(numel);
    for (std::size_t j = 0; j < numel; ++j)
      a.variance[j] = m2[j] / static_cast<double>(count - 1) / static_cast<double>(count);
  }
  a.output = output_at(batcher, x, target);
  a.evaluations = batcher.evaluations() + evaluations;
  return a;
}

Attribution gradient_shap(GradientModel& model, std::span<const float> x, std::int64_t target,
                          const GradientShapOptions& options) {
  detail::check_example(model, x, target);
  const std::size_t numel = x.size();
  const std::vector<float> baselines =
      options.baselines.empty() ? std::vector<float>(numel, 0.0f) : options.baselines;
  const std::int64_t rows =
      detail::row_count(baselines, static_cast<std::int64_t>(numel), "the baselines", true);
  if (options.samples < 1) throw Error("samples must be at least 1, got " + std::to_string(options.samples));
  if (!(options.stdev >= 0) || !std::isfinite(options.stdev))
    throw Error("stdev must be a finite number >= 0, got " + std::to_string(options.stdev));
  // Sample s: a baseline row, alpha ~ U(0, 1) and the noise on x, from stream s (Note [Seeded
  // streams]); the row is remembered for the product with (x - baseline).
  std::vector<std::int64_t> row_of(static_cast<std::size_t>(options.samples));
  const auto point = [&](std::int64_t s, std::span<float> row) {
    detail::Stream stream(options.seed, static_cast<std::uint64_t>(s));
    const auto r = static_cast<std::int64_t>(stream.below(static_cast<std::uint64_t>(rows)));
    const double alpha = stream.uniform();
    row_of[static_cast<std::size_t>(s)] = r;
    const float* b = baselines.data() + static_cast<std::size_t>(r) * numel;
    for (std::size_t j = 0; j < numel; ++j) {
      const double noisy = x[j] + (options.stdev > 0 ? options.stdev * stream.normal() : 0.0);
      row[j] = static_cast<float>(b[j] + alpha * (noisy - b[j]));
    }
  };
  Batcher batcher(model, options.max_batch);
  Attribution a = start("gradient-shap", model);
  a.values.assign(numel, 0.0);
  std::vector<double> m2(numel, 0.0), mean(numel, 0.0);
  std::int64_t count = 0;
  batcher.gradient(options.samples, target, point,
                   [&](std::int64_t s, double, std::span<const float> gradient, std::span<const float>) {
                     const float* b = baselines.data() +
                                      static_cast<std::size_t>(row_of[static_cast<std::size_t>(s)]) * numel;
                     ++count;
                     const double inverse = 1 / static_cast<double>(count);
                     for (std::size_t j = 0; j < numel; ++j) {
                       const double v = gradient[j] * (static_cast<double>(x[j]) - b[j]);
                       const double d = v - mean[j];
                       mean[j] += d * inverse;
                       m2[j] += d * (v - mean[j]);
                     }
                   });
  a.values = mean;
  if (count > 1) {
    a.variance.resize(numel);
    for (std::size_t j = 0; j < numel; ++j)
      a.variance[j] = m2[j] / static_cast<double>(count - 1) / static_cast<double>(count);
  }
  a.output = output_at(batcher, x, target);
  double reference = 0;
  batcher.forward(
      rows,
      [&](std::int64_t r, std::span<float> row) {
        std::copy_n(baselines.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(r) * numel),
                    numel, row.begin());
      },
      [&](std::int64_t, std::span<const float> outputs) {
        reference += outputs[static_cast<std::size_t>(target)];
      });
  a.reference_output = reference / static_cast<double>(rows);
  a.delta = a.sum() - (a.output - a.reference_output);
  a.evaluations = batcher.evaluations();
  return a;
}

Attribution expected_gradients(GradientModel& model, std::span<const float> x, std::int64_t target,
                               const ExpectedGradientsOptions& options) {
  if (options.background.empty())
    throw Error("expected gradients needs background rows (the data's distribution)");
  GradientShapOptions g;
  g.baselines = options.background;
  g.samples = options.samples;
  g.stdev = 0;
  g.seed = options.seed;
  g.max_batch = options.max_batch;
  Attribution a = gradient_shap(model, x, target, g);
  a.method = "expected-gradients";
  return a;
}

}  // namespace tfdebug::interpret
