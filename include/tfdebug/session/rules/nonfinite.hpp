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

  static void describe(RuleKeys<NonfiniteRule>& keys) { keys.flag("enabled", &NonfiniteRule::enabled); }
};

}  // namespace tfdebug
