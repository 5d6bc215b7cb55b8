// LIME over on/off features (text's tokens, an image's superpixels), shared by lime_text and
// lime_image: sample 0 is x (every feature on), the others come from `draw` on their own stream
// (Note [Seeded streams]), `build` turns a mask into the model's input; each sample is weighted by
// the kernel exp(-d^2 / (2 w^2)) (upstream's sqrt(exp(-d^2 / w^2))) of its cosine distance to the
// all-on mask times `distance_scale`, and the weighted Ridge is fitted to the target output.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "random.hpp"
#include "tfdebug/interpret/lime.hpp"

namespace tfdebug::interpret::detail {

struct MaskSampling {
  std::int64_t features = 0;
  std::int64_t samples = 0;
  double distance_scale = 1;
  double kernel_width = 0;
  double alpha = 1;
  std::uint64_t seed = 0;
  std::int64_t max_batch = 1;
  bool keep_neighbourhood = false;
  // Fills a sample's mask (1: the feature is as in x, 0: hidden), from its stream.
  std::function<void(Stream&, std::span<double>)> draw;
  // The model's input for a mask.
  std::function<void(std::span<const double>, std::span<float>)> build;
};

// values: one coefficient per feature (the caller spreads them over the input).
LimeAttribution lime_masks(ForwardModel& model, std::int64_t target, const MaskSampling& sampling);

}  // namespace tfdebug::interpret::detail
