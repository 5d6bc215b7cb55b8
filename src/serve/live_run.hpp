// LiveRun: what the dashboard knows of a run, kept in the shape of the HTML report's data object
// (src/export/html_run_data.cpp) so that the same page draws it; and the events that extend it.
// Private to tfdebug::serve; not thread-safe (the Dashboard holds its lock).
#pragma once

#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tfdebug/session/finding.hpp"
#include "tfdebug/session/run_summary.hpp"
#include "tfdebug/session/step_metrics.hpp"

namespace tfdebug::serve::detail {

struct LiveRunLimits {
  std::size_t max_steps = 2000;
  std::size_t max_modules = 100;
  std::size_t max_findings = 10000;
};

class LiveRun {
 public:
  LiveRun(LiveRunLimits limits, std::string title, std::vector<std::pair<std::string, std::string>> config);

  // Each returns the event that tells a page the same change ({"kind": ...}).
  nlohmann::json add_step(const StepMetrics& metrics);
  // nullopt past max_findings (counted in dropped_findings()).
  std::optional<nlohmann::json> add_finding(const Finding& finding);
  nlohmann::json end(const RunSummary& summary);
  // "flight", "profile" or "graph": the page's section data, as html_report.hpp's run_report_part.
  nlohmann::json set_part(const std::string& part, nlohmann::json value);

  // The page's data object: {"kind": "run", "live": {...}, "run", "findings", "metrics", ...}.
  nlohmann::json snapshot() const;
  std::uint64_t dropped_findings() const noexcept { return dropped_findings_; }
  bool saw_error() const noexcept { return saw_error_; }

 private:
  struct Row {
    std::int64_t step = 0;
    std::optional<double> loss;
    // Per tracked module (index in modules_): grad_norm, update_ratio, act_abs_max,
    // act_zero_fraction, act_nonfinite, act_dead_fraction.
    std::vector<std::array<std::optional<double>, 6>> values;
  };
  nlohmann::json run_json() const;

  LiveRunLimits limits_;
  std::string title_;
  std::vector<std::pair<std::string, std::string>> config_;
  std::deque<Row> rows_;
  std::int64_t steps_ = 0;  // seen, including those no longer kept
  std::int64_t first_step_ = 0;
  std::int64_t last_step_ = 0;
  std::vector<std::string> modules_;
  std::map<std::string, std::size_t> module_index_;
  std::set<std::string> module_names_;  // every name seen (bounded: modules_total stops counting)
  nlohmann::json findings_ = nlohmann::json::array();
  std::uint64_t dropped_findings_ = 0;
  bool saw_error_ = false;
  std::optional<RunSummary> summary_;
  std::map<std::string, nlohmann::json> parts_;
};

}  // namespace tfdebug::serve::detail
