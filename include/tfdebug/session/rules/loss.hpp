// Settings of the rules `loss_spike` and `divergence` (docs/rules.md: the step's loss).
//
//   config.rules.get<tfdebug::LossRule>().spike_factor = 5;   // [rules.loss] spike_factor = 5
#pragma once

#include <string_view>

#include "tfdebug/session/rule_settings.hpp"

namespace tfdebug {

struct LossRule {
  static constexpr std::string_view kSection = "loss";
  bool enabled = true;
  double spike_factor = 10.0;  // loss > factor x the largest loss seen (Megatron-LM)
  int window = 50;             // losses kept for the robust z-score
  int min_window = 10;         // losses needed before the z-score is used
  double max_z = 6.0;          // (loss - median) / (1.4826 MAD) above this is a spike ...
  // ... when the loss is also this many times the median: a loss that settled on a plateau has a
  // tiny MAD, and mini-batch noise there scores z > 6 without being a jump.
  double min_spike_ratio = 1.5;
  int divergence_window = 10;  // median of this many recent losses ...
  // ... above factor x the lowest median of `window` losses so far: divergence (the lowest
  // median of divergence_window losses would be a run of lucky batches on a noisy task).
  double divergence_factor = 3.0;

  static void describe(RuleKeys<LossRule>& keys) {
    keys.flag("enabled", &LossRule::enabled)
        .real("spike_factor", &LossRule::spike_factor, Range::positive)
        .integer("window", &LossRule::window, Range::positive)
        .integer("min_window", &LossRule::min_window, Range::positive)
        .real("max_z", &LossRule::max_z, Range::positive)
        .real("min_spike_ratio", &LossRule::min_spike_ratio, Range::positive)
        .integer("divergence_window", &LossRule::divergence_window, Range::positive)
        .real("divergence_factor", &LossRule::divergence_factor, Range::positive);
  }
};

}  // namespace tfdebug
