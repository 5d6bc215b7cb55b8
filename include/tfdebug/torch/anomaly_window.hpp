// A Session sink that tells a step-windowed Profiler (tfdebug/torch/profiler.hpp) where the run
// went wrong: at the first error-level finding it calls Profiler::mark_anomaly(finding.step,
// "<rule> in <module> <op>"), so the trace keeps the steps around that step and names it with an
// instant event ("tfdebug: nonfinite in blocks.1.mlp aten::log").
//
//   auto profiler = std::make_shared<tfdebug::torch::Profiler>(
//       *model, tfdebug::torch::ProfilerOptions{.keep_steps_before = 3, .keep_steps_after = 1});
//   session.add_sink(std::make_shared<tfdebug::torch::AnomalyWindowSink>(profiler));
//   auto debug = tfdebug::torch::attach(session, *model);
//   ... debug.step_begin(s); profiler->step_begin(s); step; profiler->step_end(s); debug.step_end(s, loss);
//   tfdebug::profile::OpProfile p = profiler->stop();   // p.trace: the window; p.window: its steps
//
// The sink shares the profiler, so a Session that outlives it stays safe: findings after stop()
// are ignored. Stop the profiler on the training thread between steps (no finding is being
// reported then).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "tfdebug/session/sink.hpp"
#include "tfdebug/torch/profiler.hpp"

namespace tfdebug::torch {

class AnomalyWindowSink : public Sink {
 public:
  // Marks the profiler at the step the error arrives, not later.
  Delivery delivery() const noexcept override { return Delivery::synchronous; }
  explicit AnomalyWindowSink(std::shared_ptr<Profiler> profiler, Severity at_least = Severity::error)
      : profiler_(std::move(profiler)), at_least_(at_least) {}
  void on_finding(const Finding& finding) override;
  void on_run_end(const RunSummary& summary) override { (void)summary; }

  // The description given to mark_anomaly ("nonfinite in blocks.1.mlp aten::log"; the module is
  // "(model)" when the finding has none).
  static std::string describe(const Finding& finding);

 private:
  std::shared_ptr<Profiler> profiler_;
  Severity at_least_;
};

}  // namespace tfdebug::torch
