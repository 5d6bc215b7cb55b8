// Settings of the rule `unused_parameters` (docs/rules.md: a parameter that takes gradients and
// whose gradient never comes).
//
//   config.rules.get<tfdebug::UnusedParametersRule>().window = 200;   // [rules.unused_parameters]
#pragma once

#include <cstdint>
#include <string_view>

#include "tfdebug/core/error.hpp"
#include "tfdebug/session/rule_settings.hpp"

namespace tfdebug {

struct UnusedParametersRule {
  static constexpr std::string_view kSection = "unused_parameters";
  bool enabled = true;
  // Steps that delivered other parameters' gradients, since the parameter was first seen
  // trainable, without one of its own: then no loss depends on it.
  std::int64_t window = 100;

  static void describe(RuleKeys<UnusedParametersRule>& keys) {
    keys.flag("enabled", &UnusedParametersRule::enabled)
        .integer("window", &UnusedParametersRule::window)
        .check([](const UnusedParametersRule& r) {
          if (r.window < 1) throw Error("rules.unused_parameters.window: must be at least 1");
        });
  }
};

}  // namespace tfdebug
