// StepMetrics: the numbers a Session hands its sinks at the end of every step (Sink::on_step):
// the loss, and per module the gradient norm, the update/weight ratio and a summary of its
// forward outputs; on histogram steps (RunConfig::metrics.histogram_every) also histograms of
// every parameter and of every module's outputs. All of it comes from the statistics the
// Session computes for its rules anyway (one stats kernel pass per tensor); only histograms
// take a second pass, on histogram steps.
//
//   class LossPrinter : public tfdebug::Sink {
//     void on_finding(const tfdebug::Finding&) override {}
//     void on_run_end(const tfdebug::RunSummary&) override {}
//     void on_step(const tfdebug::StepMetrics& m) override {
//       for (const tfdebug::ModuleMetrics& module : m.modules)
//         if (module.grad_norm) std::printf("%s %g\n", module.module.c_str(), *module.grad_norm);
//     }
//   };
//
// Definitions (docs/exports.md, "From a training run"):
//   grad_norm    = sqrt(sum over the module's parameter gradients of ||g||_2^2)
//   update_ratio = sqrt(sum ||update||_2^2) / sqrt(sum ||weight||_2^2) over the module's weight
//                  matrices (parameters of rank >= 2), the weights as they were before the update
// A gradient, update or weight holding NaN or Inf makes the module's value NaN.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tfdebug {

// The forward outputs observed in one module during one step (every op of the module in tier
// diagnose; the parameterised layers' outputs on the steps tier watch observes them).
struct ActivationSummary {
  std::int64_t outputs = 0;    // tensors
  std::int64_t values = 0;     // elements, all outputs together
  std::int64_t nonfinite = 0;  // NaN and +-Inf among them
  std::int64_t zeros = 0;      // exactly +-0
  double abs_max = 0;          // the largest finite |x| (0 when there is none)
  // The largest fraction of units (last dimension) that were 0 for every row of one output, over
  // the module's outputs that the dead_units rule measured; empty when it measured none.
  std::optional<double> dead_fraction;

  double zero_fraction() const noexcept { return values > 0 ? double(zeros) / double(values) : 0.0; }
};

struct ModuleMetrics {
  std::string module;  // module path; for a parameter without one, its name up to the last '.'
  std::optional<double> grad_norm;
  std::optional<double> update_ratio;
  std::optional<ActivationSummary> activations;
};

// A histogram in TensorFlow's default buckets: counts[i] belongs to tensorflow_bucket_limits()[i]
// (<tfdebug/core/histogram.hpp>; 1551 buckets), with the summary of the finite values.
// NaN and Inf are not binned.
struct HistogramSnapshot {
  std::string name;  // the parameter's name (weights) or the module path (activations)
  std::vector<std::int64_t> counts;
  std::int64_t count = 0;  // finite values
  double min = 0, max = 0, sum = 0, sum_squares = 0;
};

struct StepMetrics {
  std::int64_t step = 0;
  std::optional<double> loss;
  std::vector<ModuleMetrics> modules;  // sorted by module path
  // Histogram steps only, and only when a sink wants histograms (Sink::wants_histograms).
  std::vector<HistogramSnapshot> weights;      // one per parameter, sorted by name
  std::vector<HistogramSnapshot> activations;  // one per module: all its forward outputs
  std::int64_t dropped_histograms = 0;         // beyond RunConfig::metrics.max_histograms
};

}  // namespace tfdebug
