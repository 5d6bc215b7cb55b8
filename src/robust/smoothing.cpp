#include "tfdebug/robust/smoothing.hpp"

#include <algorithm>
#include <string>

#include "interpret/batching.hpp"
#include "interpret/random.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/normal.hpp"
#include "tfdebug/robust/binomial.hpp"

namespace tfdebug::robust {
namespace {

void check_options(const interpret::ForwardModel& model, std::span<const float> x, const SmoothingOptions& o,
                   bool selection) {
  interpret::detail::check_example(model, x, 0);
  if (!(o.sigma > 0)) throw Error("smoothing: sigma must be positive, got " + std::to_string(o.sigma));
  if (o.n < 1) throw Error("smoothing: n must be at least 1, got " + std::to_string(o.n));
  if (selection && o.n0 < 1) throw Error("smoothing: n0 must be at least 1, got " + std::to_string(o.n0));
  if (!(o.alpha > 0) || !(o.alpha < 1))
    throw Error("smoothing: alpha must be in (0, 1), got " + std::to_string(o.alpha));
}

std::int64_t argmax(std::span<const float> v) {
  return static_cast<std::int64_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

}  // namespace

std::vector<std::int64_t> noisy_class_counts(interpret::ForwardModel& model, std::span<const float> x,
                                             double sigma, std::int64_t samples, std::uint64_t first_stream,
                                             std::uint64_t seed, std::int64_t max_batch) {
  interpret::detail::Batcher batcher(model, max_batch);
  std::vector<std::int64_t> counts(static_cast<std::size_t>(model.output_size()), 0);
  batcher.forward(
      samples,
      [&](std::int64_t i, std::span<float> point) {
        // Note [Seeded streams]: sample i's noise depends on (seed, stream) only.
        interpret::detail::Stream stream(seed, first_stream + static_cast<std::uint64_t>(i));
        stream.fill_normal(point, x, sigma);
      },
      [&](std::int64_t, std::span<const float> out) { ++counts[static_cast<std::size_t>(argmax(out))]; });
  return counts;
}

Certificate certify(interpret::ForwardModel& model, std::span<const float> x, const SmoothingOptions& o) {
  check_options(model, x, o, true);
  Certificate c;
  const std::vector<std::int64_t> selection =
      noisy_class_counts(model, x, o.sigma, o.n0, 0, o.seed, o.max_batch);
  c.selected =
      static_cast<std::int64_t>(std::max_element(selection.begin(), selection.end()) - selection.begin());
  const std::vector<std::int64_t> estimation =
      noisy_class_counts(model, x, o.sigma, o.n, static_cast<std::uint64_t>(o.n0), o.seed, o.max_batch);
  c.count = estimation[static_cast<std::size_t>(c.selected)];
  c.samples = o.n;
  c.evaluations = o.n0 + o.n;
  c.p_lower = clopper_pearson_lower(c.count, o.n, o.alpha);
  if (c.p_lower >= 0.5) {
    c.predicted = c.selected;
    c.radius = o.sigma * normal_quantile(c.p_lower, /*refine=*/true);
  }
  return c;
}

SmoothedPrediction predict(interpret::ForwardModel& model, std::span<const float> x,
                           const SmoothingOptions& o) {
  check_options(model, x, o, false);
  SmoothedPrediction p;
  const std::vector<std::int64_t> counts = noisy_class_counts(model, x, o.sigma, o.n, 0, o.seed, o.max_batch);
  std::vector<std::size_t> order(counts.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return counts[a] > counts[b]; });
  p.top_count = counts[order[0]];
  p.second_count = order.size() > 1 ? counts[order[1]] : 0;
  p.evaluations = o.n;
  p.p_value = binomial_test(p.top_count, p.top_count + p.second_count);
  if (p.p_value <= o.alpha) p.predicted = static_cast<std::int64_t>(order[0]);
  return p;
}

}  // namespace tfdebug::robust
