// Settings of the rule `nonfinite` (docs/rules.md: the first NaN or Inf, producer vs propagator).
//
//   config.rules.get<tfdebug::NonfiniteRule>().enabled = false;   // [rules.nonfinite] enabled = false
#pragma once

#include <string_view>

#include "tfdebug/session/rule_settings.hpp"

namespace tfdebug {

struct NonfiniteRule {
  static constexpr std::string_view kSection = "nonfinite";
  bool enabled = true;
  // +-Inf (without NaN) written by an op that fills caller-chosen values (masked_fill, where,
  // full), or passed on from such an op or from outside the step, is a mask's, not a fault
  // (Note [Intended infinities] in src/session/rules/nonfinite.cpp).
  bool intended_infinities = true;

  static void describe(RuleKeys<NonfiniteRule>& keys) {
    keys.flag("enabled", &NonfiniteRule::enabled)
        .flag("intended_infinities", &NonfiniteRule::intended_infinities);
  }
};

}  // namespace tfdebug
