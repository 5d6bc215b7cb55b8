// TensorBoardSink: a debugged training run in TensorBoard, live. Add it to a tfdebug::Session
// and every step's metrics become scalars, histograms land on histogram steps, and findings
// appear as text at the step they were found (docs/exports.md, "From a training run").
//
//   tfdebug::Session session(config);
//   session.add_sink(std::make_shared<tfdebug::TensorBoardSink>("runs/tb/exp1"));
//   ... train with tfdebug::torch::attach(session, model) or a tfdebug::Probe ...
//   session.finish();   // writes the run summary and closes the event file
//
// Tags: scalars "loss", "grad_norm/<module>", "update_ratio/<module>",
// "activation_abs_max/<module>", "zero_fraction/<module>", "dead_fraction/<module>",
// "nonfinite/<module>"; histograms "weights/<parameter>" and "activations/<module>"; text
// "findings/<rule>" (one entry per rule and step) and "run" (the summary, at the last step).
// Writing is TensorBoardWriter's: on_step only queues, a background thread writes.
#pragma once

#include <string>
#include <vector>

#include "tfdebug/export/tensorboard.hpp"
#include "tfdebug/session/sink.hpp"

namespace tfdebug {

class TensorBoardSink : public Sink {
 public:
  // Creates `run_dir` and an event file in it (tfdebug::Error naming the path when it cannot).
  explicit TensorBoardSink(const std::string& run_dir, TensorBoardOptions options = {});

  void on_finding(const Finding& finding) override;  // kept until the end of its step
  void on_step(const StepMetrics& metrics) override;
  bool wants_step_metrics() const noexcept override { return true; }
  void on_run_end(const RunSummary& summary) override;  // the summary text, then close
  bool wants_histograms() const noexcept override { return true; }

  const std::string& path() const noexcept { return writer_.path(); }

 private:
  void write_findings();
  TensorBoardWriter writer_;
  std::vector<Finding> pending_;
};

}  // namespace tfdebug
