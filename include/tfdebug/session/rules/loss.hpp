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
  // Losses needed before the z-score is used (at most `window`): a whole window. The MAD of a few
  // losses is a rough guess of their spread (its standard error from 10 normal values is 0.37 of
  // it), and the first steps' losses are not yet the run's noise: a GRU under RMSprop, whose early
  // steps are 2-3x its learning rate, lifted one batch's loss 1.7-2.9x above the median of its
  // first 11-22 steps (z 6-20) in 8 of 16 healthy runs, back to the median at the next step.
  int min_window = 50;
  double max_z = 6.0;  // (loss - median) / (1.4826 MAD) above this is a spike ...
  // ... when the loss is also this many times the median: a loss that settled on a plateau has a
  // tiny MAD, and mini-batch noise there scores z > 6 without being a jump.
  double min_spike_ratio = 1.5;
  // ... and when the jump (loss - median) is at least this share of the largest loss so far: a
  // converged loss is tiny, and a hard batch lifting it from 0.0004 to 0.0016 (4x, z 10) undoes
  // nothing of what training did (an MLP with LayerNorm and tanh whose loss fell from 1.4).
  double min_spike_share = 0.05;
  // ... and when the jump is at least this many times the largest jump above the median among the
  // window's losses: a level the window's own batches reached is the task's noise. A classifier
  // near its fit has batches with one confidently wrong example: a breast-cancer MLP at a median
  // of 0.03 had batches at 0.15-0.27 every 10-40 steps, each z 6-13 and 5-8x the median.
  double min_spike_over_window = 2.0;
  // ... and, for a loss above 0, when the jump over the median is at least this many times the
  // largest such jump, relative to its median, of the run's earlier steps (Note [The run's own
  // noise] in src/session/rules/loss.cpp): a batch as far above its median as batches of the same
  // run went before is mini-batch noise that a window of 50 steps had not seen.
  double min_spike_over_history = 2.0;
  int divergence_window = 10;  // median of this many recent losses ...
  // ... above factor x the lowest median of `window` losses so far: divergence (the lowest
  // median of divergence_window losses would be a run of lucky batches on a noisy task).
  double divergence_factor = 3.0;
  // ... and has given back at least this share of what it fell (the highest median of `window`
  // losses less the lowest; Note [A converged loss does not diverge] in
  // src/session/rules/loss.cpp): a classifier near its fit moves between 0.003 and 0.03.
  double divergence_min_share = 0.1;
  // A loss whose lowest median is at or below 0 (a Gaussian NLL) has no 0 to take a ratio to: it
  // diverges when the recent median has given back this share of what it fell (the highest median
  // of `window` losses less the lowest), and more than its batches' noise.
  double divergence_give_back = 0.5;

  static void describe(RuleKeys<LossRule>& keys) {
    keys.flag("enabled", &LossRule::enabled)
        .real("spike_factor", &LossRule::spike_factor, Range::positive)
        .integer("window", &LossRule::window, Range::positive)
        .integer("min_window", &LossRule::min_window, Range::positive)
        .real("max_z", &LossRule::max_z, Range::positive)
        .real("min_spike_ratio", &LossRule::min_spike_ratio, Range::positive)
        .real("min_spike_share", &LossRule::min_spike_share, Range::fraction)
        .real("min_spike_over_window", &LossRule::min_spike_over_window, Range::positive)
        .real("min_spike_over_history", &LossRule::min_spike_over_history, Range::positive)
        .integer("divergence_window", &LossRule::divergence_window, Range::positive)
        .real("divergence_factor", &LossRule::divergence_factor, Range::positive)
        .real("divergence_min_share", &LossRule::divergence_min_share, Range::fraction)
        .real("divergence_give_back", &LossRule::divergence_give_back, Range::fraction);
  }
};

}  // namespace tfdebug
