// Sinks: where a Session's findings and metrics go. A Session calls on_finding once for each new
// finding (the first time a rule trips for a module and op), on_step at the end of every step
// with that step's metrics (after the step's findings), and on_run_end once with the
// deduplicated summary.
//
// Lock rules: every call is made with the Session's lock held, from the thread that called
// begin_step/end_step/finish (on_finding also from observing threads). Keep them quick (queue,
// buffer, append; no waiting on the network), and never call back into the Session from them.
// An exception from on_step is caught by the Session and reported in RunSummary::hook_errors,
// so a full disk never stops training.
//
//   class Printer : public tfdebug::Sink {
//     void on_finding(const tfdebug::Finding& f) override { std::puts(f.message.c_str()); }
//     void on_run_end(const tfdebug::RunSummary&) override {}
//   };
//   session.add_sink(std::make_shared<Printer>());
//
// The sinks of this library: ConsoleSink (console_sink.hpp), JsonReportSink
// (json_report_sink.hpp); tfdebug::export writes TensorBoard, MLflow, Excel, JSONL and CSV.
#pragma once

#include "tfdebug/session/finding.hpp"
#include "tfdebug/session/run_summary.hpp"
#include "tfdebug/session/step_metrics.hpp"

namespace tfdebug {

class Sink {
 public:
  virtual ~Sink() = default;
  virtual void on_finding(const Finding& finding) = 0;
  virtual void on_run_end(const RunSummary& summary) = 0;
  // The step's metrics (StepMetrics::weights and activations are filled only on histogram
  // steps, and only when some sink of the Session returns true from wants_histograms). Called
  // only when some sink of the Session returns true from wants_step_metrics.
  virtual void on_step(const StepMetrics& metrics) { (void)metrics; }
  // Whether this sink reads on_step: a Session keeps per-step metrics (per-module sums, a few
  // map look-ups per observation) only when one of its sinks asks. Read at add_sink.
  virtual bool wants_step_metrics() const noexcept { return false; }
  // Whether this sink uses histograms: they cost a second pass over each tensor on histogram
  // steps, so a Session computes them only when one of its sinks asks. Read at add_sink.
  virtual bool wants_histograms() const noexcept { return false; }
};

}  // namespace tfdebug
