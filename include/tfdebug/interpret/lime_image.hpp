// LIME for images ([F], tfdebug/interpret/model.hpp; after the upstream `lime` package's
// LimeImageExplainer): which superpixels of one image moved an output. The model's example is
// [channels, height, width] or [height, width].
//
//   tfdebug::interpret::LimeImageOptions o;
//   o.hide = tfdebug::interpret::HiddenFill::mean;  // a hidden superpixel takes its own mean colour
//   o.seed = 7;  // the same seed gives the same explanation, bit for bit, whatever max_batch
//   const auto e = tfdebug::interpret::lime_image(model, pixels, /*target=*/3, o);
//   // e.superpixel_weights[s]: superpixel s's coefficient; e.values: each pixel's superpixel's
//   // (in the input's shape); e.segments; e.intercept, e.r2, e.local_prediction
//
// Upstream's defaults: 1,000 samples; superpixels by quickshift (tfdebug/interpret/segmentation.hpp)
// unless given; sample 0 is the image, each other one keeps each superpixel with probability 1/2;
// the kernel exp(-d^2 / (2 w^2)), w = 0.25, on the cosine distance of the sample's mask to the
// all-on mask; Ridge(alpha = 1) with an intercept, fitted with the kernel weights, and its
// weighted R^2. The distance is not multiplied by 100 here (upstream multiplies only text's; at
// w = 0.25 a x100 distance would give every sample but the image itself a weight of ~0).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "tfdebug/interpret/lime.hpp"
#include "tfdebug/interpret/segmentation.hpp"

namespace tfdebug::interpret {

enum class HiddenFill { mean, value };

struct LimeImageOptions {
  std::int64_t samples = 1000;
  double kernel_width = 0.25;
  HiddenFill hide = HiddenFill::mean;  // mean: the superpixel's mean per channel (upstream's hide_color=None)
  float hide_value = 0;                // HiddenFill::value: what hidden pixels become
  QuickshiftOptions segmentation;
  std::vector<std::int32_t>
      segments;  // given superpixels ([height, width], labels 0..S-1); empty: quickshift
  double alpha = 1;
  std::uint64_t seed = 0;
  std::int64_t max_batch = 64;
  bool keep_neighbourhood = false;
};

struct LimeImageAttribution : LimeAttribution {
  std::vector<std::int32_t> segments;      // the superpixel of each pixel, [height, width]
  std::vector<double> superpixel_weights;  // the surrogate's coefficient of each superpixel
};

LimeImageAttribution lime_image(ForwardModel& model, std::span<const float> pixels, std::int64_t target,
                                const LimeImageOptions& options);

}  // namespace tfdebug::interpret
