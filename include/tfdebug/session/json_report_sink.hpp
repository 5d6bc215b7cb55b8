// JsonReportSink: the run's report.json (schema: docs/live-debugging.md, "Run directory and
// report.json"). A Session with a run_dir adds one for <run_dir>/report.json by itself.
//
//   session.add_sink(std::make_shared<tfdebug::JsonReportSink>("runs/exp1/report.json"));
#pragma once

#include <filesystem>

#include "tfdebug/session/sink.hpp"

namespace tfdebug {

// Writes the run report as JSON at on_run_end (schema: docs/live-debugging.md).
class JsonReportSink : public Sink {
 public:
  // Writes only at on_run_end.
  Delivery delivery() const noexcept override { return Delivery::synchronous; }
  explicit JsonReportSink(std::filesystem::path path);
  void on_finding(const Finding& finding) override;
  void on_run_end(const RunSummary& summary) override;
  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace tfdebug
