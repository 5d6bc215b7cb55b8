// DeepFool (Moosavi-Dezfooli et al. 2016), multi-class, L2: at each step linearise the model
// around the current point, move to the nearest linearised decision boundary among the
// candidate classes (l = argmin |f'_k| / ||w'_k||, step (|f'_l| + 1e-4) w'_l / ||w'_l||^2, as
// Foolbox), until the label changes; the output is x + (1 + overshoot) * r_total, clipped.
//
//   auto r = tfdebug::robust::deepfool(model, x, labels, {}, {});  // 50 steps, overshoot 0.02
//
// On an affine classifier one step lands on the boundary: ||r|| = |f(x)| / ||w||. Untargeted
// only (it looks for the nearest boundary); examples already misclassified are left as they are.
// Each step costs (candidates - 1) forward and backward passes per example.
#pragma once

#include <cstdint>
#include <span>

#include "tfdebug/robust/attack.hpp"

namespace tfdebug::robust {

struct DeepFoolOptions {
  std::int64_t steps = 50;
  double overshoot = 0.02;
  std::int64_t candidates = 10;  // the top classes at the input considered (Foolbox's default)
};

AttackResult deepfool(interpret::GradientModel& model, std::span<const float> inputs,
                      std::span<const std::int64_t> labels, const AttackSettings& settings,
                      const DeepFoolOptions& options);

}  // namespace tfdebug::robust
