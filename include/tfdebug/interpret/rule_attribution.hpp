// Attributions from backward rules ([H], tfdebug/interpret/rule_model.hpp), for one example `x`
// (one example's elements, row-major) and one target output:
//
//   deeplift          (x - x') * the rescale-rule gradient: sums to f(x) - f(x') (delta)
//   deeplift_shap     deeplift's mean over a set of baselines: sums to f(x) - mean f(x')
//   lrp               x * the LRP-rule gradient: the relevance of each input; sums to f(x)
//                     where every layer conserves relevance (delta says by how much it does not)
//   guided_backprop   the guided-backprop gradient (no completeness: delta NaN)
//   deconvnet         the deconvnet gradient (no completeness: delta NaN)
//
//   tfdebug::interpret::DeepLiftOptions o;   // baseline: zeros
//   const auto a = tfdebug::interpret::deeplift(model, x, /*target=*/0, o);
//   // a.values: one per input element; a.delta: sum(a.values) - (f(x) - f(x'))
//
//   tfdebug::interpret::LrpOptions l;        // epsilon 1e-9 everywhere (Captum's default)
//   l.modules = {{"fc1", {.kind = tfdebug::interpret::LrpRuleKind::gamma}}};
//   const auto r = tfdebug::interpret::lrp(model, x, 0, l);  // r.delta: sum(R) - f(x)
//
// Loops over baselines are cut into calls of at most `max_batch` examples. tfdebug::Error for an
// `x` or a baseline of the wrong size, a target out of range, or options out of range.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tfdebug/interpret/attribution.hpp"
#include "tfdebug/interpret/gradient_attribution.hpp"
#include "tfdebug/interpret/rule_model.hpp"

namespace tfdebug::interpret {

struct DeepLiftOptions {
  std::vector<float> baseline;  // x'; empty: zeros
  double epsilon = 1e-10;       // |z - z'| below this: the plain derivative (Captum's)
  std::int64_t max_batch = kDefaultMaxBatch;
};
// method "deeplift"; reference_output f(x').
Attribution deeplift(RuleModel& model, std::span<const float> x, std::int64_t target,
                     const DeepLiftOptions& options = {});

struct DeepLiftShapOptions {
  std::vector<float> baselines;  // rows (row-major, each one example); required
  double epsilon = 1e-10;
  std::int64_t max_batch = kDefaultMaxBatch;
};
// method "deeplift-shap"; reference_output: the mean of f over the baselines.
Attribution deeplift_shap(RuleModel& model, std::span<const float> x, std::int64_t target,
                          const DeepLiftShapOptions& options);

struct LrpOptions {
  LrpRule rule;  // every linear op's, unless `modules` names its module
  std::vector<std::pair<std::string, LrpRule>> modules;  // BackwardRules::lrp_modules
};
// method "lrp"; reference_output 0 (relevance starts as f(x)), delta sum(values) - f(x).
Attribution lrp(RuleModel& model, std::span<const float> x, std::int64_t target,
                const LrpOptions& options = {});

// method "guided-backprop".
Attribution guided_backprop(RuleModel& model, std::span<const float> x, std::int64_t target);
// method "deconvnet".
Attribution deconvnet(RuleModel& model, std::span<const float> x, std::int64_t target);

}  // namespace tfdebug::interpret
