// The per-step metrics of Sink::on_step, gathered from the measurements the Session makes for
// its rules (the stats kernel's result, the dead_units rule's unit activity, and on histogram
// steps the TensorFlow-bucket counts). Private to the session target; called with the Session's lock held.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "tfdebug/core/stats.hpp"
#include "tfdebug/session/run_config.hpp"
#include "tfdebug/session/step_metrics.hpp"
#include "unit_activity.hpp"

namespace tfdebug::detail {

// What the Session measured about one observation.
struct MetricInput {
  const Stats& stats;
  const UnitActivity* units = nullptr;                   // forward outputs the dead_units rule measured
  const std::vector<std::int64_t>* histogram = nullptr;  // TensorFlow buckets, on histogram steps
};

class MetricsCollector {
 public:
  explicit MetricsCollector(const RunConfig& config) : config_(config) {}

  // Whether this observation gets a histogram on this step, if there is room (callable without
  // the lock): parameters and forward outputs of floating dtypes, in the first step that observes
  // them in each run of metrics.histogram_every steps (steps 0, 10, 20 ... when every step
  // observes them; in watch, the first of its samples in each: Note [Watch budget]).
  bool histogram_step(const Observation& o) const;
  // Takes one of the step's RunConfig::metrics.max_histograms slots for the observation's
  // histogram (a module's outputs share one); false when they are all taken (counted). Makes
  // the observation's step the histogram step of its run of steps.
  bool reserve_histogram(const Observation& o);

  void observe(const Observation& o, const MetricInput& m);
  // The step's metrics; clears the step's state.
  StepMetrics end_step(std::int64_t step, std::optional<double> loss);
  // Forgets what the step observed so far (the producer replays it).
  void restart_step();

 private:
  struct ModuleState {
    std::optional<double> grad_sq;  // NaN once a gradient was not finite
    double update_sq = 0, weight_sq = 0;
    bool has_ratio = false;
    std::optional<ActivationSummary> activations;
  };
  struct UpdatePair {
    std::string layer;
    std::optional<double> weight, update;  // L2 norms; NaN when not finite
  };
  ModuleState* module(std::string_view name);
  static void add_to(HistogramSnapshot& h, const Stats& s, const std::vector<std::int64_t>& counts);

  const RunConfig& config_;
  std::map<std::string, ModuleState, std::less<>> modules_;
  std::map<std::string, UpdatePair> updates_;  // by parameter key (module, name)
  std::map<std::string, HistogramSnapshot> weights_, activations_;
  std::set<std::string> reserved_, dropped_;  // "w" / "a" + name
  // The last histogram step and its run of histogram_every steps (step / every); -1: none yet.
  std::atomic<std::int64_t> histogram_step_{-1}, histogram_run_{-1};
};

}  // namespace tfdebug::detail
