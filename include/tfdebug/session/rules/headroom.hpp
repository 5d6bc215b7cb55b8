// Settings of the rules `headroom_overflow` and `headroom_underflow` (docs/rules.md: dtype
// headroom); they run only when RunConfig::target_dtype is set.
//
//   config.target_dtype = tfdebug::DType::f16;
//   config.rules.get<tfdebug::HeadroomRule>().overflow_range_used = 0.5;
#pragma once

#include <string_view>

#include "tfdebug/session/rule_settings.hpp"

namespace tfdebug {

struct HeadroomRule {
  static constexpr std::string_view kSection = "headroom";
  bool enabled = true;  // runs only when RunConfig::target_dtype is set
  // abs_max / the target's largest finite value (Stats range_used) at or above this: overflow
  // risk. 0.763 is ONNX Runtime's HALF_OVERFLOW_THRESHOLD (50000 of f16's 65504). Files may still
  // call it overflow_headroom, its name before range_used.
  double overflow_range_used = 0.763;
  // Fraction of the elements that would flush to zero in the target at or above this.
  double underflow_fraction = 0.01;
  // Underflow is judged from this step on: the first steps' gradients are not the run's (a fresh
  // initialisation, an optimizer without state) ...
  int underflow_warmup = 10;
  // ... and when the same tensor underflows at this many observations in a row: a gradient that
  // flushes once is noise that loss scaling would not change.
  int underflow_persist = 5;

  static void describe(RuleKeys<HeadroomRule>& keys) {
    keys.flag("enabled", &HeadroomRule::enabled)
        .real("overflow_range_used", &HeadroomRule::overflow_range_used, Range::positive)
        .alias("overflow_headroom")
        .real("underflow_fraction", &HeadroomRule::underflow_fraction, Range::fraction)
        .integer("underflow_warmup", &HeadroomRule::underflow_warmup)
        .integer("underflow_persist", &HeadroomRule::underflow_persist, Range::positive);
  }
};

}  // namespace tfdebug
