#include "tfdebug/interpret/cam.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "batching.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::interpret {
namespace {

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s.append(i ? ", " : "").append(std::to_string(shape[i]));
  return s + "]";
}

std::int64_t product(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (const std::int64_t d : shape) n *= d;
  return n;
}

// The geometry every CAM shares: channels and spatial shape at the layer, and the input's
// spatial shape (its last dimensions, as many as the layer has).
struct Geometry {
  std::vector<std::int64_t> layer;  // the layer's output for one example: [channels, spatial...]
  std::int64_t channels = 0;
  std::vector<std::int64_t> layer_spatial;
  std::int64_t layer_area = 0;  // elements of one channel
  std::vector<std::int64_t> input_spatial;
  std::int64_t input_area = 0;
};

Geometry geometry(const LayerModel& model, std::span<const float> x, std::int64_t target) {
  detail::check_example(model, x, target);
  Geometry g;
  g.layer = model.layer_shape();
  if (g.layer.size() < 2 || g.layer.size() > 3) {
    throw Error("layer '" + model.layer() + "' has output shape " + shape_text(g.layer) +
                " per example; a CAM needs [channels, length] or [channels, height, width]");
  }
  for (const std::int64_t d : g.layer) {
    if (d < 1) throw Error("layer '" + model.layer() + "' has an empty output " + shape_text(g.layer));
  }
  g.channels = g.layer.front();
  g.layer_spatial.assign(g.layer.begin() + 1, g.layer.end());
  g.layer_area = product(g.layer_spatial);
  const std::vector<std::int64_t> input = model.input_shape();
  if (input.size() < g.layer_spatial.size()) {
    throw Error("the input's shape " + shape_text(input) + " has fewer dimensions than layer '" +
                model.layer() + "''s spatial shape " + shape_text(g.layer_spatial));
  }
  g.input_spatial.assign(input.end() - static_cast<std::ptrdiff_t>(g.layer_spatial.size()), input.end());
  g.input_area = product(g.input_spatial);
  return g;
}

TensorView one_example(const LayerModel& model, std::span<const float> x, std::vector<std::int64_t>& shape) {
  shape = model.input_shape();
  shape.insert(shape.begin(), 1);
  return TensorView(x.data(), DType::f32, shape);
}

// sum_k weights[k] A^k, ReLU'd if asked, at the layer and resized to the input.
CamAttribution finish(const char* method, const Geometry& g, std::span<const float> activations,
                      std::vector<double> weights, bool relu) {
  CamAttribution cam;
  cam.method = method;
  cam.layer_shape = g.layer_spatial;
  cam.layer_values.assign(static_cast<std::size_t>(g.layer_area), 0.0);
  for (std::int64_t k = 0; k < g.channels; ++k) {
    const double w = weights[static_cast<std::size_t>(k)];
    if (w == 0) continue;  // also keeps a skipped channel's values out entirely
    for (std::int64_t j = 0; j < g.layer_area; ++j)
      cam.layer_values[static_cast<std::size_t>(j)] +=
          w * activations[static_cast<std::size_t>(k * g.layer_area + j)];
  }
  if (relu) {
    for (double& v : cam.layer_values) v = std::max(v, 0.0);
  }
  cam.shape = g.input_spatial;
  cam.values = resize_linear(cam.layer_values, g.layer_spatial, g.input_spatial);
  cam.channel_weights = std::move(weights);
  return cam;
}

// One example's layer gradient: the target's score, the activations and their gradient.
struct LayerGradient {
  double score = 0;
  std::vector<float> activations, gradients;
};
LayerGradient layer_gradient(LayerModel& model, std::span<const float> x, std::int64_t target,
                             const Geometry& g) {
  LayerGradient out;
  const auto numel = static_cast<std::size_t>(g.channels * g.layer_area);
  out.activations.assign(numel, 0.0f);
  out.gradients.assign(numel, 0.0f);
  float score = 0;
  std::vector<std::int64_t> shape;
  model.layer_gradient(one_example(model, x, shape), target, std::span<float>(&score, 1), out.activations,
                       out.gradients);
  out.score = score;
  return out;
}

}  // namespace

std::int64_t layer_size(const LayerModel& model) {
  return product(model.layer_shape());
}

CamAttribution grad_cam(LayerModel& model, std::span<const float> x, std::int64_t target,
                        const CamOptions& options) {
  const Geometry g = geometry(model, x, target);
  const LayerGradient lg = layer_gradient(model, x, target, g);
  std::vector<double> alpha(static_cast<std::size_t>(g.channels), 0.0);
  for (std::int64_t k = 0; k < g.channels; ++k) {
    double sum = 0;
    for (std::int64_t j = 0; j < g.layer_area; ++j)
      sum += lg.gradients[static_cast<std::size_t>(k * g.layer_area + j)];
    alpha[static_cast<std::size_t>(k)] = sum / static_cast<double>(g.layer_area);
  }
  CamAttribution cam = finish("grad-cam", g, lg.activations, std::move(alpha), options.relu);
  cam.output = lg.score;
  cam.evaluations = 1;
  return cam;
}

CamAttribution grad_cam_plus_plus(LayerModel& model, std::span<const float> x, std::int64_t target,
                                  const CamOptions& options) {
  const Geometry g = geometry(model, x, target);
  const LayerGradient lg = layer_gradient(model, x, target, g);
  // pytorch-grad-cam's GradCAMPlusPlus: eps in the denominator, alpha = 0 where g = 0.
  constexpr double kEps = 1e-6;
  std::vector<double> weights(static_cast<std::size_t>(g.channels), 0.0);
  for (std::int64_t k = 0; k < g.channels; ++k) {
    const std::size_t base = static_cast<std::size_t>(k * g.layer_area);
    double sum_a = 0;
    for (std::int64_t j = 0; j < g.layer_area; ++j)
      sum_a += lg.activations[base + static_cast<std::size_t>(j)];
    double w = 0;
    for (std::int64_t j = 0; j < g.layer_area; ++j) {
      const double grad = lg.gradients[base + static_cast<std::size_t>(j)];
      if (grad == 0) continue;
      const double g2 = grad * grad;
      const double alpha = g2 / (2 * g2 + sum_a * g2 * grad + kEps);
      w += alpha * std::max(grad, 0.0);
    }
    weights[static_cast<std::size_t>(k)] = w;
  }
  CamAttribution cam = finish("grad-cam-plus-plus", g, lg.activations, std::move(weights), options.relu);
  cam.output = lg.score;
  cam.evaluations = 1;
  return cam;
}

CamAttribution score_cam(LayerModel& model, std::span<const float> x, std::int64_t target,
                         const ScoreCamOptions& options) {
  const Geometry g = geometry(model, x, target);
  detail::Batcher batcher(model, options.max_batch);  // checks max_batch
  std::vector<float> activations(static_cast<std::size_t>(g.channels * g.layer_area), 0.0f);
  std::vector<std::int64_t> shape;
  model.activations(one_example(model, x, shape), activations);

  // Each channel's mask over the input's spatial shape; constant channels have none.
  std::vector<std::vector<double>> masks(static_cast<std::size_t>(g.channels));
  std::vector<std::int64_t> evaluated;
  std::vector<std::int64_t> skipped;
  for (std::int64_t k = 0; k < g.channels; ++k) {
    const std::span<const float> channel(activations.data() + k * g.layer_area,
                                         static_cast<std::size_t>(g.layer_area));
    std::vector<double> a(channel.begin(), channel.end());
    std::vector<double> up = resize_linear(a, g.layer_spatial, g.input_spatial);
    const auto [lo, hi] = std::minmax_element(up.begin(), up.end());
    const double low = *lo, range = *hi - *lo;
    if (!(range > 0) || !std::isfinite(range)) {  // constant (or not finite): no mask
      skipped.push_back(k);
      continue;
    }
    for (double& v : up) v = (v - low) / range;
    masks[static_cast<std::size_t>(k)] = std::move(up);
    evaluated.push_back(k);
  }

  // Row 0 is x itself (the target's score at x), then x * H_k for each evaluated channel.
  const auto rows = static_cast<std::int64_t>(evaluated.size()) + 1;
  const std::size_t numel = x.size();
  const auto area = static_cast<std::size_t>(g.input_area);
  std::vector<double> scores(static_cast<std::size_t>(g.channels), std::numeric_limits<double>::quiet_NaN());
  double output = 0;
  batcher.forward(
      rows,
      [&](std::int64_t i, std::span<float> row) {
        if (i == 0) {
          std::copy(x.begin(), x.end(), row.begin());
          return;
        }
        const std::vector<double>& mask =
            masks[static_cast<std::size_t>(evaluated[static_cast<std::size_t>(i - 1)])];
        for (std::size_t j = 0; j < numel; ++j) row[j] = static_cast<float>(x[j] * mask[j % area]);
      },
      [&](std::int64_t i, std::span<const float> outputs) {
        const double y = outputs[static_cast<std::size_t>(target)];
        if (i == 0) {
          output = y;
        } else {
          scores[static_cast<std::size_t>(evaluated[static_cast<std::size_t>(i - 1)])] = y;
        }
      });

  std::vector<double> weights(static_cast<std::size_t>(g.channels), 0.0);
  if (!evaluated.empty()) {
    if (options.weights == ScoreCamWeights::softmax) {
      double top = -std::numeric_limits<double>::infinity();
      for (const std::int64_t k : evaluated) top = std::max(top, scores[static_cast<std::size_t>(k)]);
      double total = 0;
      for (const std::int64_t k : evaluated) {
        const double e = std::exp(scores[static_cast<std::size_t>(k)] - top);  // shifted: no overflow
        weights[static_cast<std::size_t>(k)] = e;
        total += e;
      }
      for (const std::int64_t k : evaluated) weights[static_cast<std::size_t>(k)] /= total;
    } else {
      for (const std::int64_t k : evaluated)
        weights[static_cast<std::size_t>(k)] = scores[static_cast<std::size_t>(k)];
    }
  }
  CamAttribution cam = finish("score-cam", g, activations, std::move(weights), options.relu);
  cam.channel_scores = std::move(scores);
  cam.skipped_channels = std::move(skipped);
  cam.output = output;
  cam.evaluations = 1 + batcher.evaluations();
  return cam;
}

std::vector<double> resize_linear(std::span<const double> values, const std::vector<std::int64_t>& from,
                                  const std::vector<std::int64_t>& to) {
  if (from.size() != to.size() || from.empty() || from.size() > 2) {
    throw Error("resize_linear: from " + shape_text(from) + " to " + shape_text(to) +
                ": both must have one or two dimensions, the same number");
  }
  for (std::size_t d = 0; d < from.size(); ++d) {
    if (from[d] < 1 || to[d] < 1)
      throw Error("resize_linear: from " + shape_text(from) + " to " + shape_text(to) +
                  ": sizes must be >= 1");
  }
  if (static_cast<std::int64_t>(values.size()) != product(from)) {
    throw Error("resize_linear: " + std::to_string(values.size()) + " values for shape " + shape_text(from));
  }
  // Per output index along one dimension: the two input indices and the second one's weight.
  struct Tap {
    std::int64_t i0, i1;
    double t;
  };
  const auto taps_of = [](std::int64_t in, std::int64_t out) {
    std::vector<Tap> taps(static_cast<std::size_t>(out));
    const double scale = static_cast<double>(in) / static_cast<double>(out);
    for (std::int64_t o = 0; o < out; ++o) {
      const double source = std::max((static_cast<double>(o) + 0.5) * scale - 0.5, 0.0);
      const auto i0 = std::min(static_cast<std::int64_t>(source), in - 1);
      const std::int64_t i1 = std::min(i0 + 1, in - 1);
      taps[static_cast<std::size_t>(o)] = {i0, i1, source - static_cast<double>(i0)};
    }
    return taps;
  };
  if (from.size() == 1) {
    std::vector<double> out(static_cast<std::size_t>(to[0]));
    const std::vector<Tap> x = taps_of(from[0], to[0]);
    for (std::size_t o = 0; o < out.size(); ++o)
      out[o] = (1 - x[o].t) * values[static_cast<std::size_t>(x[o].i0)] +
               x[o].t * values[static_cast<std::size_t>(x[o].i1)];
    return out;
  }
  const std::vector<Tap> ys = taps_of(from[0], to[0]), xs = taps_of(from[1], to[1]);
  const std::int64_t width = from[1];
  const auto at = [&](std::int64_t r, std::int64_t c) {
    return values[static_cast<std::size_t>(r * width + c)];
  };
  std::vector<double> out(static_cast<std::size_t>(to[0] * to[1]));
  for (std::size_t r = 0; r < ys.size(); ++r) {
    const Tap& y = ys[r];
    for (std::size_t c = 0; c < xs.size(); ++c) {
      const Tap& x = xs[c];
      const double top = (1 - x.t) * at(y.i0, x.i0) + x.t * at(y.i0, x.i1);
      const double bottom = (1 - x.t) * at(y.i1, x.i0) + x.t * at(y.i1, x.i1);
      out[r * xs.size() + c] = (1 - y.t) * top + y.t * bottom;
    }
  }
  return out;
}

}  // namespace tfdebug::interpret
