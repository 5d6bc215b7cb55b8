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
//   tfdebug::Session session(config);
//   session.add_sink(std::make_shared<tfdebug::ConsoleSink>());        // readable, on stderr
//   session.add_sink(std::make_shared<tfdebug::JsonReportSink>("r.json"));
//
// A Session with a run_dir adds a JsonReportSink for <run_dir>/report.json by itself
// (schema: docs/live-debugging.md, "Run directory and report.json").
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tfdebug/session/finding.hpp"
#include "tfdebug/session/step_metrics.hpp"

namespace tfdebug {

// One power-iteration measurement of a weight matrix (rule "spectral").
struct SpectralMeasurement {
  std::string module;
  std::string parameter;
  std::int64_t step = 0;
  double spectral_norm = 0;  // sigma_max
  double stable_rank = 0;    // ||W||_F^2 / sigma_max^2
  int iterations = 0;
};

struct RunSummary {
  std::int64_t steps = 0;  // end_step calls
  std::int64_t first_step = 0;
  std::int64_t last_step = 0;
  std::int64_t observations = 0;
  std::vector<Finding> findings;                         // deduplicated, in the order they first appeared
  std::vector<SpectralMeasurement> spectral;             // the latest measurement of each matrix
  std::optional<std::filesystem::path> flight_recorder;  // the dump, when one was written
  std::int64_t dropped_findings = 0;                     // beyond RunConfig::max_findings
  std::int64_t untracked_observations = 0;               // keys beyond RunConfig::max_tracked
  std::int64_t dropped_op_summaries = 0;                 // beyond RunConfig::flight_recorder_max_ops
  std::vector<std::string> hook_errors;                  // failures inside observe (the first 16)
  bool stopped = false;                                  // stop_on_error was set and an error was found
};

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

// Prints each new finding as one line and a summary table at the end. Colour only when `out`
// is a terminal (and NO_COLOR is unset), unless `colour` says otherwise.
class ConsoleSink : public Sink {
 public:
  explicit ConsoleSink(std::FILE* out = stderr, std::optional<bool> colour = std::nullopt);
  void on_finding(const Finding& finding) override;
  void on_run_end(const RunSummary& summary) override;

 private:
  std::FILE* out_;
  bool colour_;
};

// Writes the run report as JSON at on_run_end (schema: docs/live-debugging.md).
class JsonReportSink : public Sink {
 public:
  explicit JsonReportSink(std::filesystem::path path);
  void on_finding(const Finding& finding) override;
  void on_run_end(const RunSummary& summary) override;
  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace tfdebug
