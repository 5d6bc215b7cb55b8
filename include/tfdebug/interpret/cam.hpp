// Class activation maps: where in an image (or along a sequence) one layer's channels saw what
// made the target output, from a [L] model (tfdebug/interpret/layer_model.hpp):
//
//   grad_cam             alpha_k = the spatial mean of dy/dA^k;   map = ReLU(sum_k alpha_k A^k)
//   grad_cam_plus_plus   w_k = sum_ij alpha_ij relu(g_ij), alpha_ij = g^2 / (2 g^2 + sum_ab A_ab g^3)
//                        (g = dy/dA^k_ij; + 1e-6 in the denominator and alpha = 0 where g = 0, as
//                        pytorch-grad-cam); map = ReLU(sum_k w_k A^k)
//   score_cam            s_k = y(x * H_k), H_k = A^k upsampled to the input and min-max scaled to
//                        [0, 1]; w = softmax(s) (pytorch-grad-cam) or s (the authors' raw
//                        scores); map = ReLU(sum_k w_k A^k). Forward passes only: it works on a
//                        model whose backward throws.
//
//   const auto cam = tfdebug::interpret::grad_cam(model, x, /*target=*/3);
//   // cam.values: the map over the input's spatial shape (cam.shape, e.g. [8, 8]);
//   // cam.layer_values: the same at the layer's resolution (cam.layer_shape, e.g. [4, 4])
//
// The layer's output is [channels, spatial...] with one or two spatial dimensions; the input's
// spatial shape is its last as many dimensions ([1, 8, 8] -> [8, 8]). The map is computed at
// the layer and resized to the input by resize_linear. Maps are raw (not scaled to [0, 1]:
// pytorch-grad-cam scales each image for display, Captum does not). tfdebug::Error for an `x`
// of the wrong size, a target out of range, a layer shape that is not [channels, spatial...]
// with one or two spatial dimensions, or options out of range.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "tfdebug/interpret/attribution.hpp"
#include "tfdebug/interpret/gradient_attribution.hpp"
#include "tfdebug/interpret/layer_model.hpp"

namespace tfdebug::interpret {

// A CAM: an Attribution whose values are the map over the input's spatial shape (`shape`; method
// "grad-cam", "grad-cam-plus-plus" or "score-cam"; `output` the target's score at x; no
// completeness promise, so `delta` is NaN), with what it was made of.
struct CamAttribution : Attribution {
  std::vector<std::int64_t> layer_shape;  // the map at the layer: layer_shape() without channels
  std::vector<double> layer_values;       // row-major in layer_shape, before resizing
  std::vector<double> channel_weights;    // one per channel: alpha_k, w_k, or Score-CAM's weight
  // score_cam: s_k per channel (NaN for a skipped one), and the channels it skipped because
  // their activation is constant (no mask; pytorch-grad-cam#461: 0/0 gave NaN maps).
  std::vector<double> channel_scores;
  std::vector<std::int64_t> skipped_channels;
};

struct CamOptions {
  // false: keep the signed map sum_k w_k A^k (Captum's LayerGradCam relu_attributions=False);
  // negative regions then say where the layer saw evidence against the target.
  bool relu = true;
};

CamAttribution grad_cam(LayerModel& model, std::span<const float> x, std::int64_t target,
                        const CamOptions& options = {});
CamAttribution grad_cam_plus_plus(LayerModel& model, std::span<const float> x, std::int64_t target,
                                  const CamOptions& options = {});

enum class ScoreCamWeights {
  softmax,  // softmax of the scores over the channels evaluated (pytorch-grad-cam)
  raw,      // the scores themselves (haofanwang/Score-CAM, with a softmax model's probabilities)
};
struct ScoreCamOptions {
  bool relu = true;
  ScoreCamWeights weights = ScoreCamWeights::softmax;
  std::int64_t max_batch = kDefaultMaxBatch;  // masked inputs per forward call
};
// s_k is the target output as the model gives it (a logit unless the model ends in a softmax).
// A channel whose activation is constant over space has no mask: it is skipped (weight 0, score
// NaN, left out of the softmax, listed in skipped_channels). evaluations: the activations' call,
// f(x), and one forward per channel evaluated.
CamAttribution score_cam(LayerModel& model, std::span<const float> x, std::int64_t target,
                         const ScoreCamOptions& options = {});

// `values` (row-major over `from`, one or two dimensions) resized to `to` by linear / bilinear
// interpolation with half-pixel centres: output index o samples the input at (o + 0.5) *
// from / to - 0.5, clamped to [0, from - 1] (PyTorch's interpolate with align_corners=False,
// OpenCV's resize INTER_LINEAR when enlarging). tfdebug::Error for shapes of different ranks,
// a rank other than 1 or 2, a size < 1, or `values` not of from's size.
std::vector<double> resize_linear(std::span<const double> values, const std::vector<std::int64_t>& from,
                                  const std::vector<std::int64_t>& to);

}  // namespace tfdebug::interpret
