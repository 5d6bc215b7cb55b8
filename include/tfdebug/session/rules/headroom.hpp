// Settings of the rules `headroom_overflow` and `headroom_underflow` (docs/rules.md: dtype
// headroom); they run only when RunConfig::target_dtype is set.
//
//   config.target_dtype = tfdebug::DType::f16;
//   config.rules.get<tfdebug::HeadroomRule>().overflow_headroom = 0.5;
#pragma once

#include <string_view>

#include "tfdebug/session/rule_settings.hpp"

namespace tfdebug {

struct HeadroomRule {
  static constexpr std::string_view kSection = "headroom";
  bool enabled = true;  // runs only when RunConfig::target_dtype is set
  // abs_max / the target's largest finite value at or above this: overflow risk. 0.763 is
  // ONNX Runtime's HALF_OVERFLOW_THRESHOLD (50000 of f16's 65504).
  double overflow_headroom = 0.763;
  // Fraction of the elements that would flush to zero in the target at or above this.
  double underflow_fraction = 0.01;

  static void describe(RuleKeys<HeadroomRule>& keys) {
    keys.flag("enabled", &HeadroomRule::enabled)
        .real("overflow_headroom", &HeadroomRule::overflow_headroom, Range::positive)
        .real("underflow_fraction", &HeadroomRule::underflow_fraction, Range::fraction);
  }
};

}  // namespace tfdebug
