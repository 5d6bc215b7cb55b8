// Every export of a debugged run, rebuilt after the fact from its run directory (`tfdebug report
// RUN_DIR`, docs/report.md): the run's report.json (its findings, its summary, its
// configuration) and metrics.jsonl (every step's metrics) go through the same sinks a live run
// writes with (XlsxSink, TensorBoardSink, MlflowSink, CsvMetricsSink), in the order a live run
// feeds them. A run that was killed has no workbook of its own (XlsxSink writes at the finish);
// report.json ("complete": false) and metrics.jsonl survive, so this is how it gets one.
//
//   tfdebug::RebuildTargets targets;
//   targets.xlsx = "runs/exp1.xlsx";
//   tfdebug::RunRebuild run = tfdebug::rebuild_exports("runs/exp1", targets);
//   if (!run.summary.complete) std::puts("killed; the workbook holds what it had done");
//
// What metrics.jsonl does not hold is not rebuilt: histograms (TensorBoard's HISTOGRAMS tab),
// and the times of MLflow's points (they get the time of the rebuild).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "tfdebug/export/metrics_files.hpp"
#include "tfdebug/session/run_report.hpp"

namespace tfdebug {

struct RebuildTargets {
  std::optional<std::string> xlsx;         // a workbook (XlsxSink)
  std::optional<std::string> tensorboard;  // a TensorBoard run folder (TensorBoardSink)
  std::optional<std::string> mlflow;       // an MLflow file store (MlflowSink)
  std::optional<std::string> csv;          // metrics.csv (CsvMetricsSink)
  std::string mlflow_experiment = "tfdebug report";
  std::string mlflow_run_name;  // empty: the run directory's name

  bool any() const noexcept { return xlsx || tensorboard || mlflow || csv; }
};

struct RunRebuild {
  RunReport report;  // report.json as read
  // metrics.jsonl, when the run directory has one (it must, for any target).
  std::optional<MetricsFileRead> metrics;
  // What the exports were given: report.summary, with the steps of metrics.jsonl when the run
  // did not finish (report.json is rewritten at most once a second; metrics.jsonl every step),
  // and the flight recorder's dump in run_dir (as a live run's sinks name it).
  RunSummary summary;
};

// Reads RUN_DIR/report.json and RUN_DIR/metrics.jsonl and writes every target. tfdebug::Error
// naming the file and what was expected when one is missing (metrics.jsonl only matters when
// a target is asked for) or malformed, or a target cannot be written.
RunRebuild rebuild_exports(const std::filesystem::path& run_dir, const RebuildTargets& targets);

}  // namespace tfdebug
