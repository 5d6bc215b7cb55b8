// Attributions from input gradients ([G], tfdebug/interpret/model.hpp), for one example `x`
// (one example's elements, row-major) and one target output:
//
//   gradient_x_input           x * grad f(x)
//   integrated_gradients       (x - x') * the integral of grad f along the line from x' to x
//   path_integrated_gradients  the same along a piecewise-linear path through given points
//   smoothgrad                 the mean (or the mean square, or the variance) of a base
//                              method over Gaussian noise on x
//   gradient_shap              grad f at random points between random baselines and a noisy x,
//                              times (x - baseline)
//   expected_gradients         (x - x') * grad f(x' + a (x - x')) over background rows x' and
//                              a ~ U(0, 1), with the variance of the mean
//
//   tfdebug::interpret::IntegratedGradientsOptions ig;   // 50 Gauss-Legendre nodes, baseline 0
//   ig.max_batch = 32;                                    // points per model call
//   const auto a = tfdebug::interpret::integrated_gradients(model, x, /*target=*/3, ig);
//   // a.values: one per input element; a.delta: sum(a.values) - (f(x) - f(x'))
//
// Every loop over points is cut into calls of at most `max_batch` examples; every random draw
// comes from a generator seeded by `seed`, so the same seed gives the same attributions.
// tfdebug::Error for an `x` or a baseline of the wrong size, a target out of range, or options
// out of range.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "tfdebug/interpret/attribution.hpp"
#include "tfdebug/interpret/model.hpp"
#include "tfdebug/interpret/quadrature.hpp"

namespace tfdebug::interpret {

inline constexpr std::int64_t kDefaultMaxBatch = 64;

Attribution gradient_x_input(GradientModel& model, std::span<const float> x, std::int64_t target);

struct IntegratedGradientsOptions {
  std::vector<float> baseline;  // x'; empty: zeros
  std::int64_t steps = 50;      // quadrature nodes (Captum's n_steps)
  Quadrature method = Quadrature::gauss_legendre;
  std::int64_t max_batch = kDefaultMaxBatch;
};
Attribution integrated_gradients(GradientModel& model, std::span<const float> x, std::int64_t target,
                                 const IntegratedGradientsOptions& options = {});

// `waypoints`: the path's points after its start, the last equal to x; the path starts at
// options.baseline (zeros when empty) and runs straight between consecutive points, each segment
// integrated with options.steps nodes. Completeness holds for any path.
Attribution path_integrated_gradients(GradientModel& model, std::span<const float> x, std::int64_t target,
                                      const std::vector<std::vector<float>>& waypoints,
                                      const IntegratedGradientsOptions& options = {});

enum class NoiseTunnel { smoothgrad, smoothgrad_sq, vargrad };
enum class BaseMethod { saliency, gradient_x_input, integrated_gradients };
struct SmoothGradOptions {
  BaseMethod base = BaseMethod::saliency;  // saliency: the plain gradient (signed)
  NoiseTunnel kind = NoiseTunnel::smoothgrad;
  std::int64_t samples = 5;  // noisy copies of x (Captum's nt_samples; the paper uses 50)
  double stdev = 1.0;        // sigma of the noise, absolute (Captum's stdevs)
  std::uint64_t seed = 0;
  IntegratedGradientsOptions integrated;  // base integrated_gradients: its options
  std::int64_t max_batch = kDefaultMaxBatch;
};
Attribution smoothgrad(GradientModel& model, std::span<const float> x, std::int64_t target,
                       const SmoothGradOptions& options = {});

struct GradientShapOptions {
  // Baseline rows (row-major, each one example); empty: one row of zeros.
  std::vector<float> baselines;
  std::int64_t samples = 5;  // Captum's n_samples
  double stdev = 0;          // noise on x
  std::uint64_t seed = 0;
  std::int64_t max_batch = kDefaultMaxBatch;
};
// reference_output: the mean target output over the baseline rows.
Attribution gradient_shap(GradientModel& model, std::span<const float> x, std::int64_t target,
                          const GradientShapOptions& options = {});

struct ExpectedGradientsOptions {
  std::vector<float> background;  // rows of the data distribution (row-major); required
  std::int64_t samples = 200;     // shap's nsamples
  std::uint64_t seed = 0;
  std::int64_t max_batch = kDefaultMaxBatch;
};
// reference_output: the mean target output over the background; variance: of each value's mean.
Attribution expected_gradients(GradientModel& model, std::span<const float> x, std::int64_t target,
                               const ExpectedGradientsOptions& options);

}  // namespace tfdebug::interpret
