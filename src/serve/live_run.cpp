// The dashboard's run state and events (live_run.hpp).
#include "live_run.hpp"

#include <array>
#include <cmath>

#include "tfdebug/export/html_report.hpp"
#include "tfdebug/version.hpp"

namespace tfdebug::serve::detail {
namespace {

using nlohmann::json;

// As the report writes numbers (src/export/html_data.hpp): NaN and Inf as strings, JSON has none.
json page_number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Inf" : "-Inf";
  return v;
}
json page_number(const std::optional<double>& v) {
  return v ? page_number(*v) : json(nullptr);
}

// A finding as the page reads it: the report's own encoding (html_report.hpp).
json page_finding(const Finding& f) {
  return json::parse(html_finding_json(f));
}

constexpr std::array<const char*, 6> kKinds = {"grad_norm",         "update_ratio",  "act_abs_max",
                                               "act_zero_fraction", "act_nonfinite", "act_dead_fraction"};
constexpr std::size_t kMaxNamesCounted = 100000;

}  // namespace

LiveRun::LiveRun(LiveRunLimits limits, std::string title,
                 std::vector<std::pair<std::string, std::string>> config)
    : limits_(limits), title_(std::move(title)), config_(std::move(config)) {}

json LiveRun::add_step(const StepMetrics& m) {
  if (steps_ == 0) first_step_ = m.step;
  ++steps_;
  last_step_ = m.step;
  Row row;
  row.step = m.step;
  row.loss = m.loss;
  json modules = json::array();
  for (const ModuleMetrics& module : m.modules) {
    if (module_names_.size() < kMaxNamesCounted) module_names_.insert(module.module);
    auto it = module_index_.find(module.module);
    if (it == module_index_.end()) {
      if (modules_.size() >= limits_.max_modules) continue;
      it = module_index_.emplace(module.module, modules_.size()).first;
      modules_.push_back(module.module);
    }
    std::array<std::optional<double>, 6> v;
    v[0] = module.grad_norm;
    v[1] = module.update_ratio;
    if (module.activations) {
      const ActivationSummary& a = *module.activations;
      v[2] = a.abs_max;
      v[3] = a.zero_fraction();
      v[4] = double(a.nonfinite);
      v[5] = a.dead_fraction;
    }
    if (row.values.size() <= it->second) row.values.resize(it->second + 1);
    row.values[it->second] = v;
    json entry = json::array({module.module});
    for (const auto& x : v) entry.push_back(page_number(x));
    modules.push_back(entry);
  }
  rows_.push_back(std::move(row));
  while (rows_.size() > limits_.max_steps) rows_.pop_front();
  return {{"kind", "step"}, {"step", m.step}, {"loss", page_number(m.loss)}, {"modules", modules}};
}

std::optional<json> LiveRun::add_finding(const Finding& finding) {
  if (findings_.size() >= limits_.max_findings) {
    ++dropped_findings_;
    return std::nullopt;
  }
  if (finding.severity == Severity::error) saw_error_ = true;
  json f = page_finding(finding);
  findings_.push_back(f);
  return json{{"kind", "finding"}, {"finding", f}};
}

json LiveRun::end(const RunSummary& summary) {
  summary_ = summary;
  // The summary's findings are the deduplicated ones with their counts and last steps: they
  // replace those that came one by one.
  findings_ = json::array();
  for (const Finding& f : summary.findings) {
    if (findings_.size() >= limits_.max_findings) break;
    if (f.severity == Severity::error) saw_error_ = true;
    findings_.push_back(page_finding(f));
  }
  json spectral = json::array();
  for (const SpectralMeasurement& m : summary.spectral)
    spectral.push_back(
        {m.module, m.parameter, m.step, page_number(m.spectral_norm), page_number(m.stable_rank)});
  return {{"kind", "end"}, {"run", run_json()}, {"findings", findings_}, {"spectral", spectral}};
}

json LiveRun::set_part(const std::string& part, json value) {
  parts_[part] = value;
  return {{"kind", part}, {part, std::move(value)}};
}

json LiveRun::run_json() const {
  const RunSummary empty;
  const RunSummary& s = summary_ ? *summary_ : empty;
  return {{"dir", title_},
          {"version", TFDEBUG_VERSION_STRING},
          {"complete", summary_ && s.complete},
          {"steps", summary_ ? s.steps : steps_},
          {"first_step", summary_ ? s.first_step : first_step_},
          {"last_step", summary_ ? s.last_step : last_step_},
          {"observations", s.observations},
          {"stopped", s.stopped},
          {"dropped",
           {{"findings", s.dropped_findings + std::int64_t(dropped_findings_)},
            {"untracked_observations", s.untracked_observations},
            {"op_summaries", s.dropped_op_summaries},
            {"sink_events", s.dropped_sink_events}}},
          {"hook_errors", s.hook_errors}};
}

json LiveRun::snapshot() const {
  json config = json::array();
  for (const auto& [key, value] : config_) config.push_back({key, value});
  json spectral = json::array();
  if (summary_) {
    for (const SpectralMeasurement& m : summary_->spectral)
      spectral.push_back(
          {m.module, m.parameter, m.step, page_number(m.spectral_norm), page_number(m.stable_rank)});
  }
  json metrics = nullptr;
  if (!rows_.empty()) {
    json steps = json::array();
    json loss = json::array();
    for (const Row& r : rows_) {
      steps.push_back(r.step);
      loss.push_back(page_number(r.loss));
    }
    metrics = {{"steps", steps},
               {"stride", 1},
               {"module_steps", steps},
               {"module_stride", 1},
               {"lines", steps_},
               {"cut_off", false},
               {"modules_total", module_names_.size()},
               {"modules", modules_},
               {"loss", loss}};
    for (std::size_t k = 0; k < kKinds.size(); ++k) {
      json rows = json::array();
      bool any = false;
      for (std::size_t i = 0; i < modules_.size(); ++i) {
        json values = json::array();
        for (const Row& r : rows_) {
          const bool has = i < r.values.size() && r.values[i][k].has_value();
          any = any || has;
          values.push_back(has ? page_number(*r.values[i][k]) : json(nullptr));
        }
        rows.push_back(std::move(values));
      }
      metrics[kKinds[k]] = any ? rows : json(nullptr);
    }
  }
  const auto part = [&](const char* name) {
    const auto it = parts_.find(name);
    return it == parts_.end() ? json(nullptr) : it->second;
  };
  return {{"kind", "run"},
          {"generator", "tfdebug " TFDEBUG_VERSION_STRING},
          {"live",
           {{"max_steps", limits_.max_steps},
            {"max_modules", limits_.max_modules},
            {"steps_kept", rows_.size()}}},
          {"run", run_json()},
          {"findings", findings_},
          {"config", config},
          {"spectral", spectral},
          {"metrics", metrics},
          {"flight", part("flight")},
          {"profile", part("profile")},
          {"graph", part("graph")}};
}

}  // namespace tfdebug::serve::detail
