#include "lime_masks.hpp"

#include <cmath>
#include <string>
#include <vector>

#include "batching.hpp"
#include "tfdebug/core/error.hpp"
#include "weighted_ridge.hpp"

namespace tfdebug::interpret::detail {

LimeAttribution lime_masks(ForwardModel& model, std::int64_t target, const MaskSampling& o) {
  if (o.samples < 2) throw Error("samples must be at least 2, got " + std::to_string(o.samples));
  if (!(o.alpha >= 0)) throw Error("alpha must be >= 0");
  if (!(o.kernel_width > 0)) throw Error("kernel_width must be > 0");
  const auto m = static_cast<std::size_t>(o.features);
  const auto n = static_cast<std::size_t>(o.samples);
  std::vector<double> data(n * m, 1.0), outputs(n);
  Batcher batcher(model, o.max_batch);
  batcher.forward(
      o.samples,
      [&](std::int64_t s, std::span<float> row) {
        std::span<double> z(data.data() + static_cast<std::size_t>(s) * m, m);
        if (s > 0) {
          Stream stream(o.seed, static_cast<std::uint64_t>(s));
          o.draw(stream, z);
        }
        o.build(z, row);
      },
      [&](std::int64_t s, std::span<const float> out) {
        outputs[static_cast<std::size_t>(s)] = out[static_cast<std::size_t>(target)];
      });
  // Cosine distance to the all-on mask: 1 - on / sqrt(on * m) for 0/1 masks; sklearn's 1 for an
  // all-off mask (a zero vector's similarity is 0).
  std::vector<double> weights(n);
  for (std::size_t s = 0; s < n; ++s) {
    double on = 0;
    for (std::size_t j = 0; j < m; ++j) on += data[s * m + j];
    const double d = o.distance_scale * (on > 0 ? 1 - on / std::sqrt(on * static_cast<double>(m)) : 1.0);
    weights[s] = std::exp(-d * d / (2 * o.kernel_width * o.kernel_width));
  }
  const RidgeFit fit = weighted_ridge(data, m, outputs, weights, o.alpha);
  LimeAttribution a;
  a.method = "lime";
  a.values = fit.coefficients;
  a.intercept = fit.intercept;
  a.r2 = fit.r2;
  a.local_prediction = fit.local_prediction;
  a.output = outputs[0];
  a.evaluations = batcher.evaluations();
  if (o.keep_neighbourhood) {
    a.data = std::move(data);
    a.weights = std::move(weights);
    a.outputs = std::move(outputs);
  }
  return a;
}

}  // namespace tfdebug::interpret::detail
