// MLflow runs in a file store (`mlruns/`), the layout MLflow 2.x reads with
// `mlflow ui --backend-store-uri ./mlruns` (MLflow >= 3.13 also needs MLFLOW_ALLOW_FILE_STORE=true).
//
//   tfdebug::MlflowRun run("mlruns", "tfdebug demo", "fault=log");   // experiment created if new
//   run.log_param("lr", "0.001");
//   for (std::int64_t step = 0; step < 100; ++step) run.log_metric("loss", loss, step);
//   run.set_tag("diagnosis", "aten::log in blocks.1");
//   run.log_artifact("runs/demo/report.json");
//   run.finish();                                                       // status FINISHED
//
// Layout (docs/exports.md): mlruns/<experiment id>/meta.yaml, .../<run id>/meta.yaml, metrics/<key>
// ("<ms> <value> <step>" lines, values as Python prints floats), params/<key> and tags/<key>
// (the value, no newline), artifacts/. Keys with "/" become sub-folders, as in MLflow.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace tfdebug {

// One metric point with the time it was measured (milliseconds since the Unix epoch).
struct MlflowMetric {
  std::string key;
  double value = 0;
  std::int64_t step = 0;
  std::int64_t timestamp_ms = 0;
};

class MlflowRun {
 public:
  // Opens `mlruns` (creating it and the Default experiment "0" if needed), finds the experiment
  // named `experiment` or creates it, and starts a run (status RUNNING). Throws tfdebug::Error.
  MlflowRun(const std::string& mlruns, const std::string& experiment, const std::string& run_name);
  ~MlflowRun();  // finish() unless already finished (errors are dropped there)
  MlflowRun(const MlflowRun&) = delete;
  MlflowRun& operator=(const MlflowRun&) = delete;

  // Keys: letters, digits, and _ - . space / (MLflow's rule); values of params and tags are text.
  void log_param(const std::string& key, const std::string& value);
  void set_tag(const std::string& key, const std::string& value);
  void log_metric(const std::string& key, double value, std::int64_t step);
  // Many points at once, each key's file opened once (points of a key keep their order): for
  // loggers that buffer. Every key is checked before anything is written.
  void log_metrics(std::span<const MlflowMetric> points);
  // Copies a file into the run's artifacts/ (keeping its file name).
  void log_artifact(const std::string& path);
  // Ends the run: status FINISHED (or FAILED), end_time now.
  void finish(bool failed = false);

  const std::string& run_id() const noexcept { return run_id_; }
  const std::string& experiment_id() const noexcept { return experiment_id_; }
  const std::string& run_dir() const noexcept { return run_dir_; }

 private:
  void write_meta(const char* status, const std::string& end_time);
  std::string experiment_id_;
  std::string run_id_;
  std::string run_name_;
  std::string run_dir_;
  std::int64_t start_ms_ = 0;
  bool finished_ = false;
};

// How Python prints a float (repr): "0.5", "100.0", "1e-05", "1e+16", "nan", "inf", "-inf",
// which is how MLflow writes metric values.
std::string python_float(double value);

}  // namespace tfdebug
