// Settings of the rule `dead_units` (docs/rules.md: units exactly 0 for every input over a window).
//
//   config.rules.get<tfdebug::DeadUnitsRule>().window = 50;   // [rules.dead_units] window = 50
#pragma once

#include <cstdint>
#include <string_view>

#include "tfdebug/session/rule_settings.hpp"

namespace tfdebug {

struct DeadUnitsRule {
  static constexpr std::string_view kSection = "dead_units";
  bool enabled = true;
  int window = 100;                  // a unit is dead when it was exactly 0 for this many steps
  double min_fraction = 0.1;         // report a module when at least this fraction of units is dead
  std::int64_t min_values = 1000;    // values per unit the window must hold (it reaches back for them)
  std::int64_t max_units = 1 << 20;  // outputs with more units (last dimension) are skipped

  static void describe(RuleKeys<DeadUnitsRule>& keys) {
    keys.flag("enabled", &DeadUnitsRule::enabled)
        .integer("window", &DeadUnitsRule::window, Range::positive)
        .real("min_fraction", &DeadUnitsRule::min_fraction, Range::fraction)
        .integer("min_values", &DeadUnitsRule::min_values, Range::positive)
        .integer("max_units", &DeadUnitsRule::max_units);
  }
};

}  // namespace tfdebug
