// tfdebug::torch::AnomalyWindowSink (tfdebug/torch/anomaly_window.hpp).
#include "tfdebug/torch/anomaly_window.hpp"

namespace tfdebug::torch {

std::string AnomalyWindowSink::describe(const Finding& finding) {
  std::string out = finding.rule + " in " + (finding.module.empty() ? "(model)" : finding.module);
  if (!finding.op.empty()) out += " " + finding.op;
  return out;
}

void AnomalyWindowSink::on_finding(const Finding& finding) {
  // Session calls sinks under its lock, possibly from observing threads; mark_anomaly is
  // thread-safe and keeps only the first anomaly, so later findings cost one locked check.
  if (finding.severity < at_least_ || !profiler_->running()) return;
  (void)profiler_->mark_anomaly(finding.step, describe(finding));
}

}  // namespace tfdebug::torch
