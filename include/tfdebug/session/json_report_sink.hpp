// JsonReportSink: the run's report.json (schema: docs/live-debugging.md, "Run directory and
// report.json"). A Session with a run_dir adds one for <run_dir>/report.json by itself, and
// rewrites it while the run goes on (Note [Report as it goes] in src/session/session.cpp), so a
// killed run leaves its findings so far, with "complete": false.
//
//   session.add_sink(std::make_shared<tfdebug::JsonReportSink>("runs/exp1/report.json"));
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "tfdebug/session/sink.hpp"

namespace tfdebug {

// Writes the run report as JSON at on_run_end (schema: docs/live-debugging.md).
class JsonReportSink : public Sink {
 public:
  // Writes only at on_run_end (and when write is called).
  Delivery delivery() const noexcept override { return Delivery::synchronous; }
  // `config`: RunConfig::entries(), written as the report's "config".
  explicit JsonReportSink(std::filesystem::path path,
                          std::vector<std::pair<std::string, std::string>> config = {});
  void on_finding(const Finding& finding) override;
  void on_run_end(const RunSummary& summary) override;  // write(summary)
  // Replaces the file atomically (a temporary file in the same folder, then rename(2)): a reader
  // sees the old report or the new one, never part of one. "complete" is summary.complete.
  // tfdebug::Error naming the path.
  void write(const RunSummary& summary);
  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
  std::vector<std::pair<std::string, std::string>> config_;
};

}  // namespace tfdebug
