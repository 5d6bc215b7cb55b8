// The per-step metrics of a debugged run (Sink::on_step) as plain files that any script reads:
// JSON Lines (one object per step) and CSV (one row per value, "long" form). Both are appended
// and flushed at every step, so a crashed run leaves every finished step readable. Schemas:
// docs/exports.md, "From a training run".
//
//   session.add_sink(std::make_shared<tfdebug::JsonlMetricsSink>("runs/exp1/metrics.jsonl"));
//   session.add_sink(std::make_shared<tfdebug::CsvMetricsSink>("runs/exp1/metrics.csv"));
//
//   metrics.jsonl: {"step":0,"loss":2.9,"modules":{"blocks.0.attn.q":{"grad_norm":0.01,
//                   "update_ratio":0.003,"activations":{"outputs":2,"values":8192,...}}}}
//   metrics.csv:   step,metric,module,value
//                  0,loss,,2.9004
//                  0,grad_norm,blocks.0.attn.q,0.0094
// Histograms are not written here (TensorBoardSink has them).
//
// read_metrics_jsonl reads metrics.jsonl back (`tfdebug report` rebuilds every export from it):
//
//   tfdebug::read_metrics_jsonl("runs/exp1/metrics.jsonl", [](const tfdebug::StepMetrics& m) { ... });
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>

#include "tfdebug/session/sink.hpp"

namespace tfdebug {

// Base of the two: owns the file (created with its folder; tfdebug::Error naming the path when
// it cannot be), closes it at on_run_end.
class MetricsFileSink : public Sink {
 public:
  ~MetricsFileSink() override;
  MetricsFileSink(const MetricsFileSink&) = delete;
  MetricsFileSink& operator=(const MetricsFileSink&) = delete;

  void on_finding(const Finding& finding) override { (void)finding; }
  void on_run_end(const RunSummary& summary) override;
  const std::filesystem::path& path() const noexcept { return path_; }

 protected:
  explicit MetricsFileSink(std::filesystem::path path);
  void write(const std::string& text);  // appends and flushes; tfdebug::Error when it cannot

 private:
  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
};

class JsonlMetricsSink : public MetricsFileSink {
 public:
  explicit JsonlMetricsSink(std::filesystem::path path) : MetricsFileSink(std::move(path)) {}
  void on_step(const StepMetrics& metrics) override;
  bool wants_step_metrics() const noexcept override { return true; }
};

class CsvMetricsSink : public MetricsFileSink {
 public:
  explicit CsvMetricsSink(std::filesystem::path path);  // writes the header row
  void on_step(const StepMetrics& metrics) override;
  bool wants_step_metrics() const noexcept override { return true; }
};

// What read_metrics_jsonl read.
struct MetricsFileRead {
  std::int64_t steps = 0;       // lines (one per step)
  std::int64_t first_step = 0;  // of the first line and the last one (0 when there is none)
  std::int64_t last_step = 0;
  // The file ended in part of a line (a run killed while writing it): that part is left out.
  bool cut_off = false;
  // Bytes from the start of the file to the end of the last whole line read: where a later read
  // of the same file, grown since, takes up (`from` below).
  std::uint64_t end_offset = 0;
};

// Calls `step` with each line's metrics, in file order, as JsonlMetricsSink wrote them (a module
// "(top level)" is module ""; loss is absent when the line says null without loss_nonfinite).
// Only what metrics.jsonl holds: no histograms; ActivationSummary::zeros from zero_fraction.
// tfdebug::Error naming the file, the line and the field for anything else.
//
// `from`: start at this byte (a previous read's end_offset; a live run's file is read as it grows,
// as `tfdebug top` does). Lines in errors are then counted from there; a `from` past the end of the
// file reads nothing.
MetricsFileRead read_metrics_jsonl(const std::filesystem::path& path,
                                   const std::function<void(const StepMetrics&)>& step,
                                   std::uint64_t from = 0);

}  // namespace tfdebug
