// Sinks: where a Session's findings and metrics go. A Session calls on_finding once for each new
// finding (the first time a rule trips for a module and op), on_step at the end of every step
// with that step's metrics (after the step's findings), and on_run_end once with the
// deduplicated summary.
//
// Delivery (Note [Sink delivery] in src/session/sink_queue.cpp): a sink is queued unless it says
// it is quick. A queued sink has a thread and a bounded queue of its own; the Session only
// copies each event into that queue, so a slow or stuck sink costs the training thread nothing.
// When its queue is full, new events are dropped and counted (RunSummary::dropped_sink_events);
// finish() waits for the queue to empty (at most RunConfig::sink_finish_timeout_s) before
// on_run_end. A synchronous sink is called with the Session's lock held, on the thread that
// called begin_step/end_step/finish (on_finding also from observing threads): keep it quick
// (append to memory, print a line) and never call back into the Session from any sink.
// An exception from on_step or on_finding is caught and reported in RunSummary::hook_errors, so
// a full disk never stops training; one from on_run_end makes finish() throw tfdebug::Error.
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

#include <cstdint>
#include <span>

#include "tfdebug/core/stats.hpp"
#include "tfdebug/session/finding.hpp"
#include "tfdebug/session/observation.hpp"
#include "tfdebug/session/run_summary.hpp"
#include "tfdebug/session/step_metrics.hpp"

namespace tfdebug {

enum class Delivery : std::uint8_t {
  queued,       // on the sink's own thread, through a bounded queue (the default)
  synchronous,  // on the Session's thread, under its lock: for sinks that only append to memory
};

class Sink {
 public:
  virtual ~Sink() = default;
  // Read at add_sink.
  virtual Delivery delivery() const noexcept { return Delivery::queued; }
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

  // Pausing (Note [Pause channel] in src/session/session.cpp): a sink that wants to stop the
  // training at an observation (a breakpoint) says so here; read at add_sink. A Session then asks
  // pause_at about every observation, on the observing thread without its lock, after its rules
  // ran on it, with the statistics it measured and the findings the observation raised (repeats
  // included). Keep it quick: it runs for every op. Whatever the sink's delivery.
  virtual bool wants_pauses() const noexcept { return false; }
  // True stops the producer here: the Session answers the observation with Verdict::pause.
  virtual bool pause_at(const Observation& observation, const Stats& stats, std::span<const Finding> raised) {
    (void)observation;
    (void)stats;
    (void)raised;
    return false;
  }
  // The producer stopped where pause_at asked: this call is the pause. It runs on the training
  // thread (or the autograd engine's), which waits until it returns; `point`'s tensors are alive
  // and readable until then. Exceptions are caught and reported in RunSummary::hook_errors.
  virtual void on_pause(const PausePoint& point) { (void)point; }
};

}  // namespace tfdebug
