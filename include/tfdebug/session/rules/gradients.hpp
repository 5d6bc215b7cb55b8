// Settings of the rules `exploding_gradients` and `vanishing_gradients` (docs/rules.md: per layer).
//
//   config.rules.get<tfdebug::GradientRule>().explode_ratio = 20;   // [rules.gradients]
#pragma once

#include <string_view>

#include "tfdebug/core/error.hpp"
#include "tfdebug/session/rule_settings.hpp"

namespace tfdebug {

struct GradientRule {
  static constexpr std::string_view kSection = "gradients";
  bool enabled = true;
  // Steps of a layer's history before comparing to it: the first steps of training move every
  // norm by large factors (an RNN's gradients grow tenfold in its first ten steps).
  int min_history = 20;
  double explode_ratio = 10.0;  // norm / median of the layer's history above this, and
  // either above the layer's largest norm before it, or for this many steps running (a single
  // step below the run's peak is a hard mini-batch: Note [A spike or an explosion])
  int explode_sustain = 5;
  // Steps a layer's norms have been kept before one step beyond its largest counts: until then
  // the largest is a record of few steps, which noise beats often (a step of stationary noise
  // passes every one of the n before it with chance 1/(n + 1): 5% per layer at step 20), and a
  // step must stay above for explode_sustain steps (Note [A spike or an explosion]).
  int peak_after = 50;
  // ... unless it is in line with the other layers: at most this many times the step's median
  // layer (explode_ratio times in a step whose loss is the run's lowest: learning), whose own norm
  // has not risen explode_ratio times above its history (a layer catching up: Note [Catching up])
  double in_line_ratio = 3.0;
  double vanish_ratio = 1e-2;  // ... below this
  int min_layers = 3;          // layers in a step before comparing layers
  // norm / median of the step's layer norms above this; 0: off (the default). Layers differ by
  // orders of magnitude in healthy deep stacks (the top layers of a sigmoid stack carry 100x the
  // median layer's gradient), so an explosion is judged against the layer's own history.
  double explode_vs_layers = 0.0;
  double vanish_vs_layers = 1e-3;  // ... below this: a layer that stopped learning
  static void describe(RuleKeys<GradientRule>& keys) {
    keys.flag("enabled", &GradientRule::enabled)
        .integer("min_history", &GradientRule::min_history, Range::positive)
        .real("explode_ratio", &GradientRule::explode_ratio, Range::positive)
        .integer("explode_sustain", &GradientRule::explode_sustain, Range::positive)
        .integer("peak_after", &GradientRule::peak_after)
        .real("in_line_ratio", &GradientRule::in_line_ratio, Range::positive)
        .real("vanish_ratio", &GradientRule::vanish_ratio, Range::positive)
        .integer("min_layers", &GradientRule::min_layers, Range::positive)
        .real("explode_vs_layers", &GradientRule::explode_vs_layers)
        .real("vanish_vs_layers", &GradientRule::vanish_vs_layers)
        .check([](const GradientRule& r) {
          if (r.vanish_ratio >= r.explode_ratio)
            throw Error("rules.gradients.vanish_ratio: must be below rules.gradients.explode_ratio");
        });
  }
};

}  // namespace tfdebug
