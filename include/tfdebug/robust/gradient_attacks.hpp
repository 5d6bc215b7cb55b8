// FGSM and PGD (Goodfellow et al. 2015; Madry et al. 2018): steps along the gradient of the
// cross-entropy, projected onto the eps-ball around the input and into the valid range. The
// defaults are torchattacks': L-inf eps 8/255, step 2/255, 10 steps, a random start; L2 eps 1,
// step 0.2.
//
//   tfdebug::robust::AttackSettings s{.clip_min = 0, .clip_max = 1};
//   auto f = tfdebug::robust::fgsm(model, x, labels, s, {.eps = 0.1});
//   auto p = tfdebug::robust::pgd(model, x, labels, s, {.eps = 0.1, .step_size = 0.01, .steps = 40});
//
// Untargeted attacks ascend the cross-entropy of the label; targeted ones descend that of the
// target. Each PGD step costs one forward and one backward pass per example (see attack.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "tfdebug/robust/attack.hpp"

namespace tfdebug::robust {

enum class Norm { linf, l2 };

struct FgsmOptions {
  double eps = 8.0 / 255;  // L-inf size of the step
};

// x + eps * sign(grad), clipped.
AttackResult fgsm(interpret::GradientModel& model, std::span<const float> inputs,
                  std::span<const std::int64_t> labels, const AttackSettings& settings,
                  const FgsmOptions& options);

enum class StepSchedule {
  constant,  // step_size at every step
  cosine,    // step_size * (1 + cos(pi t / steps)) / 2 at step t: large steps first, fine ones last
};

struct PgdOptions {
  Norm norm = Norm::linf;
  double eps = 8.0 / 255;        // radius of the ball (torchattacks' L2 default is 1.0)
  double step_size = 2.0 / 255;  // alpha (torchattacks' L2 default is 0.2)
  std::int64_t steps = 10;
  bool random_start = true;   // uniform in the ball (ART's default is false)
  std::int64_t restarts = 1;  // runs from fresh random starts; the first that succeeds is kept
  StepSchedule schedule = StepSchedule::constant;
  // Called after every step with the example's index, the step (1-based) and its current
  // adversarial input (tests check that ||x_adv - x|| <= eps holds throughout).
  std::function<void(std::int64_t example, std::int64_t step, std::span<const float> adversarial)> on_step =
      {};
};

// Projected gradient descent: L-inf steps are alpha * sign(grad); L2 steps alpha * grad/||grad||_2.
AttackResult pgd(interpret::GradientModel& model, std::span<const float> inputs,
                 std::span<const std::int64_t> labels, const AttackSettings& settings,
                 const PgdOptions& options);

}  // namespace tfdebug::robust
