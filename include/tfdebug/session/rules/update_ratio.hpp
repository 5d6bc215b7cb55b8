// Settings of the rule `update_ratio` (docs/rules.md: ||update|| / ||weight|| of weight matrices).
//
//   config.rules.get<tfdebug::UpdateRatioRule>().max_ratio = 0.5;   // [rules.update_ratio]
#pragma once

#include <string_view>

#include "tfdebug/core/error.hpp"
#include "tfdebug/session/rule_settings.hpp"

namespace tfdebug {

struct UpdateRatioRule {
  static constexpr std::string_view kSection = "update_ratio";
  bool enabled = true;
  double min_ratio = 1e-5;  // ||update|| / ||parameter|| below this, and never above: not learning
  double max_ratio = 1e-1;  // above this: learning rate too high (CS231n: ~1e-3 is healthy)
  // A weight's first updates are judged only against immediate_ratio: Adam's and RMSprop's first steps divide
  // by a second moment built from one or two gradients, so every entry moves by about the learning rate
  // (ratios of 0.1-0.3 on small weights at step 0 of a healthy run).
  int warmup = 10;
  // Steps in a row outside [min_ratio, max_ratio] before it is reported: one noisy step is not a
  // learning rate ...
  int persist = 10;
  // ... but an update larger than the weight itself is, at once, warm-up or not.
  double immediate_ratio = 1.0;
  // The first update observed (with a warm-up) is judged against immediate_ratio x this:
  // RMSprop's first step moves every entry by 10 learning rates (a GRU at PyTorch's default lr
  // 0.01 updates its input weights by 1.0x their norm at step 0 of a healthy run), its later
  // ones by 7, 5.8, ... 3.2 at the tenth.
  double first_update_factor = 10.0;
  static void describe(RuleKeys<UpdateRatioRule>& keys) {
    keys.flag("enabled", &UpdateRatioRule::enabled)
        .real("min_ratio", &UpdateRatioRule::min_ratio)
        .real("max_ratio", &UpdateRatioRule::max_ratio)
        .integer("warmup", &UpdateRatioRule::warmup)
        .integer("persist", &UpdateRatioRule::persist, Range::positive)
        .real("immediate_ratio", &UpdateRatioRule::immediate_ratio, Range::positive)
        .real("first_update_factor", &UpdateRatioRule::first_update_factor, Range::positive)
        .check([](const UpdateRatioRule& r) {
          if (r.min_ratio < 0 || r.min_ratio >= r.max_ratio)
            throw Error("rules.update_ratio: need 0 <= min_ratio < max_ratio");
        });
  }
};

}  // namespace tfdebug
