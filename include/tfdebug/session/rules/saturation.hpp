// Settings of the rule `saturation` (docs/rules.md: tanh, sigmoid and GELU in their flat tails).
//
//   config.rules.get<tfdebug::SaturationRule>().max_fraction = 0.3;   // [rules.saturation]
#pragma once

#include <string_view>

#include "tfdebug/core/error.hpp"
#include "tfdebug/session/rule_settings.hpp"

namespace tfdebug {

struct SaturationRule {
  static constexpr std::string_view kSection = "saturation";
  bool enabled = true;
  double margin = 0.01;       // tanh: |y| >= 1 - margin; sigmoid: y <= margin or y >= 1 - margin
  double gelu_cutoff = 3.0;   // GELU: input x < -gelu_cutoff, where |GELU'(x)| < 0.012
  double max_fraction = 0.5;  // report when at least this fraction of values is saturated

  static void describe(RuleKeys<SaturationRule>& keys) {
    keys.flag("enabled", &SaturationRule::enabled)
        .real("margin", &SaturationRule::margin, Range::positive)
        .real("gelu_cutoff", &SaturationRule::gelu_cutoff, Range::positive)
        .real("max_fraction", &SaturationRule::max_fraction, Range::fraction)
        .check([](const SaturationRule& r) {
          if (r.margin >= 0.5) throw Error("rules.saturation.margin: must be below 0.5");
        });
  }
};

}  // namespace tfdebug
