#include "tfdebug/export/mlflow_sink.hpp"

#include <cctype>
#include <chrono>
#include <filesystem>

#include "step_scalars.hpp"
#include "tfdebug/session/json_report_sink.hpp"
#include "tfdebug/version.hpp"

namespace tfdebug {

namespace {

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// MLflow's key alphabet: letters, digits, _ - . space /.
std::string mlflow_key(std::string key) {
  for (char& c : key) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == ' ' ||
          c == '/'))
      c = '_';
  }
  return key;
}

}  // namespace

MlflowSink::MlflowSink(const std::string& mlruns, const std::string& experiment, const std::string& run_name,
                       const RunConfig& config, int flush_every)
    : MlflowSink(mlruns, experiment, run_name, config.entries(), flush_every) {}

MlflowSink::MlflowSink(const std::string& mlruns, const std::string& experiment, const std::string& run_name,
                       const std::vector<std::pair<std::string, std::string>>& config_entries,
                       int flush_every)
    : run_(mlruns, experiment, run_name),
      config_(config_entries),
      flush_every_(flush_every < 1 ? 1 : flush_every) {
  for (const auto& [key, value] : config_entries) run_.log_param(key, value);
  run_.set_tag("tfdebug.version", TFDEBUG_VERSION_STRING);
}

MlflowSink::~MlflowSink() {
  if (ended_) return;
  try {
    flush();
    run_.finish(/*failed=*/true);
  } catch (const std::exception&) {  // a destructor has nobody to report to
  }
}

void MlflowSink::on_finding(const Finding& finding) {
  (void)finding;  // findings go in at the end, deduplicated, in the report and the tags
}

void MlflowSink::on_step(const StepMetrics& m) {
  const std::int64_t ms = now_ms();
  detail::for_each_scalar(m, [&](std::string_view metric, const std::string& module, double value) {
    std::string key = module.empty() ? std::string(metric) : std::string(metric) + "/" + module;
    pending_.push_back({mlflow_key(std::move(key)), value, m.step, ms});
  });
  if (++unflushed_steps_ >= flush_every_) flush();
}

void MlflowSink::flush() {
  std::vector<MlflowMetric> points;
  points.swap(pending_);  // dropped if they cannot be written: the buffer stays bounded
  unflushed_steps_ = 0;
  run_.log_metrics(points);
}

void MlflowSink::on_run_end(const RunSummary& s) {
  if (ended_) return;
  flush();
  std::int64_t counts[3] = {0, 0, 0};
  const Finding* first_error = nullptr;
  for (const Finding& f : s.findings) {
    ++counts[static_cast<int>(f.severity)];
    if (f.severity == Severity::error && first_error == nullptr) first_error = &f;
  }
  const std::int64_t ms = now_ms();
  const MlflowMetric totals[] = {{"findings.error", double(counts[2]), s.last_step, ms},
                                 {"findings.warning", double(counts[1]), s.last_step, ms},
                                 {"findings.info", double(counts[0]), s.last_step, ms}};
  run_.log_metrics(totals);
  run_.set_tag("tfdebug.healthy", counts[2] == 0 ? "true" : "false");
  run_.set_tag("tfdebug.errors", std::to_string(counts[2]));
  run_.set_tag("tfdebug.warnings", std::to_string(counts[1]));
  if (first_error != nullptr) {
    run_.set_tag("tfdebug.first_error", first_error->rule + " at step " + std::to_string(first_error->step) +
                                            ": " + first_error->message);
  }
  run_.set_tag("tfdebug.complete", s.complete ? "true" : "false");
  JsonReportSink(std::filesystem::path(run_.run_dir()) / "artifacts" / "report.json", config_).write(s);
  ended_ = true;
  run_.finish(/*failed=*/counts[2] > 0 || !s.complete);
}

}  // namespace tfdebug
