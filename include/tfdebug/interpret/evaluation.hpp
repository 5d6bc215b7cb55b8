// How good is an explanation? Measures to compare attribution methods on your model
// (../shared/reference/interpretability.md section 6):
//
//   infidelity       E over random perturbations I of (I . phi - (f(x) - f(x - I)))^2: how well
//                    the attributions predict what removing a bit of each input does (Yeh et
//                    al. 2019, Captum's defaults: 10 samples); 0 for a linear model's gradient
//   sensitivity_max  the largest relative change of the explanation, ||phi(x + d) - phi(x)|| /
//                    ||phi(x)||, over draws d uniform in an L-infinity ball (radius 0.02, 10 draws)
//   deletion / insertion curves  the target output as the most important inputs are removed
//                    (set to a reference value) or revealed (from a reference input), a fraction
//                    at a time, and the area under each curve (RISE, Petsiuk et al. 2018): a
//                    faithful ranking makes deletion fall fast (small area) and insertion rise
//                    fast (large area)
//
//   const auto ig = tfdebug::interpret::integrated_gradients(model, x, target);
//   const double inf = tfdebug::interpret::infidelity(model, x, target, ig.values);
//   const auto del = tfdebug::interpret::deletion_curve(model, x, target, ig.values);
//
// Every model call holds at most `max_batch` examples; every draw is from a seeded stream.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "tfdebug/interpret/model.hpp"

namespace tfdebug::interpret {

struct InfidelityOptions {
  std::int64_t samples = 10;  // perturbations (Captum's n_perturb_samples)
  double stdev = 0.1;         // I ~ N(0, stdev^2) per input value
  // Scale the attributions by the beta that minimises the error first (Captum's normalize):
  // then only their direction counts, not their scale.
  bool normalize = false;
  std::uint64_t seed = 0;
  std::int64_t max_batch = 64;
};
double infidelity(ForwardModel& model, std::span<const float> x, std::int64_t target,
                  std::span<const double> attributions, const InfidelityOptions& options = {});

struct SensitivityOptions {
  std::int64_t samples = 10;  // perturbed inputs (Captum's n_perturb_samples)
  double radius = 0.02;       // of the L-infinity ball
  std::uint64_t seed = 0;
};
// `explain` gives the attributions of an input (the method to judge, with its options fixed).
double sensitivity_max(const std::function<std::vector<double>(std::span<const float>)>& explain,
                       std::span<const float> x, const SensitivityOptions& options = {});

struct CurveOptions {
  std::int64_t steps = 20;  // points after the first: each reveals or removes 1/steps of the inputs
  // deletion: the value a removed input takes; insertion: the input the curve starts from
  // (a blurred copy for images). Empty: zeros.
  std::vector<float> reference;
  bool softmax = false;  // the curve of softmax(outputs)[target] (for models that give logits)
  std::int64_t max_batch = 64;
};
struct Curve {
  std::vector<double> fraction;  // of the inputs removed (deletion) or revealed (insertion), 0..1
  std::vector<double> output;    // the target output (or probability) there
  double area = 0;               // trapezoid area under output over fraction in [0, 1]
};
// Inputs in order of decreasing attribution (ties by position).
Curve deletion_curve(ForwardModel& model, std::span<const float> x, std::int64_t target,
                     std::span<const double> attributions, const CurveOptions& options = {});
Curve insertion_curve(ForwardModel& model, std::span<const float> x, std::int64_t target,
                      std::span<const double> attributions, const CurveOptions& options = {});

}  // namespace tfdebug::interpret
