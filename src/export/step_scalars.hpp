// The scalar metrics of a step as (metric, module, value) triples, in one fixed order, for the
// sinks that write them one by one (TensorBoard tags, MLflow keys, CSV rows, xlsx columns).
// The names are documented in docs/exports.md ("From a training run").
#pragma once

#include <string>
#include <string_view>

#include "tfdebug/session/step_metrics.hpp"

namespace tfdebug::detail {

// How a module path appears in tags, keys and columns: "" (ops outside every module) becomes
// "(top level)".
inline std::string module_label(const std::string& module) {
  return module.empty() ? std::string("(top level)") : module;
}

// Calls f(metric, module, value) for the loss (module "") and each module's measured values:
// grad_norm, update_ratio, activation_abs_max, zero_fraction, dead_fraction, nonfinite.
template <class F>
void for_each_scalar(const StepMetrics& m, F&& f) {
  if (m.loss) f(std::string_view("loss"), std::string(), *m.loss);
  for (const ModuleMetrics& module : m.modules) {
    const std::string label = module_label(module.module);
    if (module.grad_norm) f(std::string_view("grad_norm"), label, *module.grad_norm);
    if (module.update_ratio) f(std::string_view("update_ratio"), label, *module.update_ratio);
    if (const auto& a = module.activations) {
      f(std::string_view("activation_abs_max"), label, a->abs_max);
      f(std::string_view("zero_fraction"), label, a->zero_fraction());
      if (a->dead_fraction) f(std::string_view("dead_fraction"), label, *a->dead_fraction);
      f(std::string_view("nonfinite"), label, double(a->nonfinite));
    }
  }
}

}  // namespace tfdebug::detail
