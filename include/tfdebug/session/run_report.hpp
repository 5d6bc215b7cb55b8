// RunReport: a run directory's report.json read back (schema: docs/live-debugging.md, "Run
// directory and report.json"), for the tools that work on a run after the fact (`tfdebug report`,
// tfdebug::export's rebuild_exports). Every field is checked: a file that is not a report is a
// tfdebug::Error naming the file, the field and what was expected.
//
//   tfdebug::RunReport report = tfdebug::read_run_report("runs/exp1/report.json");
//   if (!report.summary.complete) std::puts("the run was killed before it finished");
//   for (const tfdebug::Finding& f : report.summary.findings) std::puts(f.message.c_str());
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "tfdebug/session/run_summary.hpp"

namespace tfdebug {

struct RunReport {
  std::string version;  // the tfdebug that wrote it
  // The summary as written; findings' magnitudes are not in report.json (NaN), nor are the
  // occurrences'. summary.complete is false when the run did not finish (Note [Report as it
  // goes] in src/session/session.cpp): a run killed before finish() leaves a report with the
  // findings it had made. A report without the field was written by a tfdebug that wrote
  // report.json only at the finish: true.
  RunSummary summary;
  std::vector<std::pair<std::string, std::string>> config;  // RunConfig::entries(); empty if absent
};

// At most this many bytes: report.json is bounded by RunConfig::max_findings.
inline constexpr std::uintmax_t kMaxReportBytes = std::uintmax_t(16) << 20;

// Reads and checks `path` (tfdebug::Error: missing, too large, not JSON, a field missing or of
// the wrong type, naming the file and the field).
RunReport read_run_report(const std::filesystem::path& path);

}  // namespace tfdebug
