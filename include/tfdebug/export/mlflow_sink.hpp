// MlflowSink: a debugged training run as an MLflow run (file store), so `mlflow ui` shows the
// loss and every module's gradient norm and update ratio over the steps, the RunConfig as
// params, the diagnosis as tags and the report as an artifact (docs/exports.md, "From a
// training run").
//
//   tfdebug::Session session(config);
//   session.add_sink(std::make_shared<tfdebug::MlflowSink>("mlruns", "my experiment", "run 1",
//                                                          session.config()));
//   ... train ...
//   session.finish();   // tags, artifacts/report.json, status FINISHED (or FAILED)
//
// Metric keys are the TensorBoard sink's scalar tags ("loss", "grad_norm/<module>", ...), with
// any character MLflow does not allow in a key replaced by '_' ("(top level)" -> "_top level_").
// Points are buffered and appended every `flush_every` steps and at the end (one file open per
// key per flush, not per point), each with the time it was measured.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tfdebug/export/mlflow.hpp"
#include "tfdebug/session/run_config.hpp"
#include "tfdebug/session/sink.hpp"

namespace tfdebug {

class MlflowSink : public Sink {
 public:
  // Starts the run (MlflowRun: tfdebug::Error when the store cannot be written) and logs
  // config.entries() as params.
  MlflowSink(const std::string& mlruns, const std::string& experiment, const std::string& run_name,
             const RunConfig& config, int flush_every = 10);
  // The same, with the configuration's entries as given (a run read back from its report.json).
  MlflowSink(const std::string& mlruns, const std::string& experiment, const std::string& run_name,
             const std::vector<std::pair<std::string, std::string>>& config_entries, int flush_every = 10);
  // A run that never reached on_run_end (the program threw, the Session was never finished)
  // ends FAILED, with its buffered points written.
  ~MlflowSink() override;
  MlflowSink(const MlflowSink&) = delete;
  MlflowSink& operator=(const MlflowSink&) = delete;

  void on_finding(const Finding& finding) override;
  void on_step(const StepMetrics& metrics) override;
  bool wants_step_metrics() const noexcept override { return true; }
  // Writes the buffered points, the counts as metrics "findings.error|warning|info", the tags
  // tfdebug.healthy, tfdebug.errors, tfdebug.warnings, tfdebug.first_error, tfdebug.complete,
  // artifacts/report.json, and ends the run: FAILED when an error-level finding was made or the
  // run did not finish (summary.complete false: a killed run rebuilt by rebuild_exports), else
  // FINISHED.
  void on_run_end(const RunSummary& summary) override;

  const MlflowRun& run() const noexcept { return run_; }

 private:
  void flush();
  MlflowRun run_;
  std::vector<std::pair<std::string, std::string>> config_;  // for artifacts/report.json
  std::vector<MlflowMetric> pending_;
  int flush_every_;
  int unflushed_steps_ = 0;
  bool ended_ = false;
};

}  // namespace tfdebug
