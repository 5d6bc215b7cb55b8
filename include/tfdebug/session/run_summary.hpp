// RunSummary: what a finished (or running) Session says about its run, handed to every sink at the
// end and returned by Session::finish: the deduplicated findings, the spectral measurements,
// where the flight recorder went, and what was dropped to keep memory and time bounded.
//
//   tfdebug::RunSummary summary = session.finish();
//   std::printf("%lld steps, %zu findings\n", (long long)summary.steps, summary.findings.size());
//   if (summary.dropped_sink_events > 0) ...  // a slow sink missed events (RunSummary docs)
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tfdebug/session/finding.hpp"

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
  std::int64_t dropped_sink_events = 0;                  // events queued sinks were too slow to take
  std::vector<std::string> hook_errors;                  // failures in rules and sinks (the first 16)
  bool stopped = false;                                  // stop_on_error was set and an error was found
  // False in the reports a Session writes while the run goes on (Note [Report as it goes] in
  // src/session/session.cpp), and so in a killed run's report.json read back (RunReport).
  bool complete = true;
};

}  // namespace tfdebug
