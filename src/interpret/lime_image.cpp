#include "tfdebug/interpret/lime_image.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "batching.hpp"
#include "lime_masks.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::interpret {

LimeImageAttribution lime_image(ForwardModel& model, std::span<const float> pixels, std::int64_t target,
                                const LimeImageOptions& o) {
  detail::check_example(model, pixels, target);
  const std::vector<std::int64_t> shape = model.input_shape();
  if (shape.size() != 2 && shape.size() != 3) {
    throw Error(
        "lime for images needs an example of [channels, height, width] or [height, width]; the model's is " +
        std::to_string(shape.size()) + "-dimensional");
  }
  const std::int64_t channels = shape.size() == 3 ? shape[0] : 1;
  const std::int64_t height = shape[shape.size() - 2], width = shape[shape.size() - 1];
  const auto area = static_cast<std::size_t>(height * width);
  const auto c = static_cast<std::size_t>(channels);
  LimeImageAttribution out;
  if (o.segments.empty()) {
    out.segments = quickshift(pixels, channels, height, width, o.segmentation).labels;
  } else {
    if (o.segments.size() != area)
      throw Error("segments: " + std::to_string(o.segments.size()) + " labels for " + std::to_string(area) +
                  " pixels");
    out.segments = o.segments;
  }
  std::int32_t count = 0;
  for (const std::int32_t l : out.segments) {
    if (l < 0) throw Error("segments: a negative label");
    count = std::max(count, l + 1);
  }
  const auto s_count = static_cast<std::size_t>(count);
  // Each hidden superpixel's stand-in, per channel.
  std::vector<float> fill(s_count * c, o.hide_value);
  if (o.hide == HiddenFill::mean) {
    std::vector<double> sum(s_count * c, 0.0), size(s_count, 0.0);
    for (std::size_t p = 0; p < area; ++p) {
      const auto l = static_cast<std::size_t>(out.segments[p]);
      size[l] += 1;
      for (std::size_t k = 0; k < c; ++k) sum[l * c + k] += pixels[k * area + p];
    }
    for (std::size_t l = 0; l < s_count; ++l)
      for (std::size_t k = 0; k < c; ++k)
        if (size[l] > 0) fill[l * c + k] = static_cast<float>(sum[l * c + k] / size[l]);
  }
  detail::MaskSampling s;
  s.features = count;
  s.samples = o.samples;
  s.distance_scale = 1;
  s.kernel_width = o.kernel_width;
  s.alpha = o.alpha;
  s.seed = o.seed;
  s.max_batch = o.max_batch;
  s.keep_neighbourhood = o.keep_neighbourhood;
  s.draw = [](detail::Stream& stream, std::span<double> z) {
    for (double& v : z) v = stream.uniform() < 0.5 ? 0 : 1;
  };
  s.build = [&](std::span<const double> z, std::span<float> row) {
    for (std::size_t p = 0; p < area; ++p) {
      const auto l = static_cast<std::size_t>(out.segments[p]);
      for (std::size_t k = 0; k < c; ++k)
        row[k * area + p] = z[l] != 0 ? pixels[k * area + p] : fill[l * c + k];
    }
  };
  static_cast<LimeAttribution&>(out) = detail::lime_masks(model, target, s);
  out.method = "lime";
  out.shape = shape;
  out.superpixel_weights = out.values;
  out.values.assign(c * area, 0.0);
  for (std::size_t k = 0; k < c; ++k)
    for (std::size_t p = 0; p < area; ++p)
      out.values[k * area + p] = out.superpixel_weights[static_cast<std::size_t>(out.segments[p])];
  return out;
}

}  // namespace tfdebug::interpret
