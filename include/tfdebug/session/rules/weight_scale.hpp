// Settings of the rules `init_scale` and `weight_drift` (docs/rules.md: std * sqrt(fan_in) of
// weight matrices).
//
//   config.rules.get<tfdebug::WeightScaleRule>().max_drift = 4;   // [rules.weight_scale]
#pragma once

#include <cstdint>
#include <string_view>

#include "tfdebug/core/error.hpp"
#include "tfdebug/session/rule_settings.hpp"

namespace tfdebug {

struct WeightScaleRule {
  static constexpr std::string_view kSection = "weight_scale";
  bool enabled = true;
  // std * sqrt(fan_in) of a weight matrix when first seen outside [min_init, max_init];
  // embedding tables (names with embed, wte, wpe, tok, pos) are not judged by fan-in
  double min_init = 0.05;
  double max_init = 8.0;
  // Drift is a rate (Note [Drift is a rate] in src/session/rules/weight_scale.cpp): in the
  // first 2 x drift_window steps a weight is judged against its first scale, which it may leave
  // by up to max_drift (or 1 / max_drift) ...
  double max_drift = 10.0;
  // ... and later against its scale drift_window steps before, by up to max_drift_rate.
  std::int64_t drift_window = 200;
  double max_drift_rate = 3.0;
  // After the first step it sees, the rule measures weights in a step at least this many steps
  // after the last it measured: a weight's scale drifts over hundreds of steps, and its full
  // statistics on every diagnose step cost more than the rest of a small model's parameters
  // (tier watch observes parameters only in the steps it samples anyway).
  std::int64_t every = 10;

  static void describe(RuleKeys<WeightScaleRule>& keys) {
    keys.flag("enabled", &WeightScaleRule::enabled)
        .real("min_init", &WeightScaleRule::min_init)
        .real("max_init", &WeightScaleRule::max_init)
        .real("max_drift", &WeightScaleRule::max_drift, Range::above_one)
        .integer("drift_window", &WeightScaleRule::drift_window, Range::positive)
        .real("max_drift_rate", &WeightScaleRule::max_drift_rate, Range::above_one)
        .integer("every", &WeightScaleRule::every, Range::positive)
        .check([](const WeightScaleRule& r) {
          if (r.min_init < 0 || r.min_init >= r.max_init)
            throw Error("rules.weight_scale: need 0 <= min_init < max_init");
        });
  }
};

}  // namespace tfdebug
