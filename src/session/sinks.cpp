#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>

#include "report_json.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/session/sink.hpp"
#include "tfdebug/version.hpp"

namespace tfdebug {

namespace detail {

namespace {
// NaN and Inf are not JSON: they are written as null.
nlohmann::ordered_json number(double value) {
  if (!std::isfinite(value)) return nullptr;
  return value;
}
}  // namespace

nlohmann::ordered_json finding_json(const Finding& f) {
  nlohmann::ordered_json evidence = nlohmann::ordered_json::object();
  for (const auto& [key, value] : f.evidence) evidence[key] = number(value);
  return {{"rule", f.rule},       {"severity", severity_name(f.severity)},
          {"step", f.step},       {"phase", phase_name(f.phase)},
          {"module", f.module},   {"op", f.op},
          {"message", f.message}, {"suggestion", f.suggestion},
          {"count", f.count},     {"last_step", f.last_step},
          {"evidence", evidence}};
}

nlohmann::ordered_json report_json(const RunSummary& s) {
  nlohmann::ordered_json findings = nlohmann::ordered_json::array();
  nlohmann::ordered_json counts = {{"error", 0}, {"warning", 0}, {"info", 0}};
  for (const Finding& f : s.findings) {
    findings.push_back(finding_json(f));
    counts[std::string(severity_name(f.severity))] =
        counts[std::string(severity_name(f.severity))].get<int>() + 1;
  }
  nlohmann::ordered_json spectral = nlohmann::ordered_json::array();
  for (const SpectralMeasurement& m : s.spectral) {
    spectral.push_back({{"module", m.module},
                        {"parameter", m.parameter},
                        {"step", m.step},
                        {"spectral_norm", number(m.spectral_norm)},
                        {"stable_rank", number(m.stable_rank)},
                        {"iterations", m.iterations}});
  }
  return {{"tool", "tfdebug"},
          {"version", TFDEBUG_VERSION_STRING},
          {"steps", s.steps},
          {"first_step", s.first_step},
          {"last_step", s.last_step},
          {"observations", s.observations},
          {"counts", counts},
          {"stopped", s.stopped},
          {"findings", findings},
          {"spectral", spectral},
          {"flight_recorder",
           s.flight_recorder ? nlohmann::ordered_json(s.flight_recorder->filename().string()) : nullptr},
          {"dropped",
           {{"findings", s.dropped_findings},
            {"untracked_observations", s.untracked_observations},
            {"op_summaries", s.dropped_op_summaries}}},
          {"hook_errors", s.hook_errors}};
}

void write_flight_recorder_json(const std::filesystem::path& path, const Finding& trigger,
                                const std::vector<RecordedStep>& steps) {
  nlohmann::ordered_json out_steps = nlohmann::ordered_json::array();
  for (const RecordedStep& step : steps) {
    nlohmann::ordered_json ops = nlohmann::ordered_json::array();
    for (const RecordedOp& op : step.ops) {
      ops.push_back({{"module", op.module},
                     {"op", op.op},
                     {"phase", phase_name(op.phase)},
                     {"role", role_name(op.role)},
                     {"count", op.count},
                     {"nan", op.nan},
                     {"inf", op.inf},
                     {"min", number(op.min)},
                     {"max", number(op.max)},
                     {"mean", number(op.mean)},
                     {"std", number(op.std)},
                     {"abs_max", number(op.abs_max)}});
    }
    out_steps.push_back({{"step", step.step},
                         {"loss", step.loss ? number(*step.loss) : nullptr},
                         {"dropped_ops", step.dropped_ops},
                         {"ops", ops}});
  }
  const nlohmann::ordered_json doc = {{"tool", "tfdebug"},
                                      {"version", TFDEBUG_VERSION_STRING},
                                      {"trigger", finding_json(trigger)},
                                      {"steps", out_steps}};
  write_text_file(path, doc.dump(1) + "\n");
}

void write_text_file(const std::filesystem::path& path, const std::string& text) {
  if (path.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec) throw Error("cannot create the folder " + path.parent_path().string() + ": " + ec.message());
  }
  const std::filesystem::path temporary = path.string() + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) throw Error("cannot write " + temporary.string());
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) throw Error("cannot rename " + temporary.string() + " to " + path.string() + ": " + ec.message());
}

}  // namespace detail

namespace {

const char* colour_of(Severity severity) {
  switch (severity) {
    case Severity::error:
      return "\033[1;31m";
    case Severity::warning:
      return "\033[33m";
    case Severity::info:
      return "\033[36m";
  }
  return "";
}

}  // namespace

ConsoleSink::ConsoleSink(std::FILE* out, std::optional<bool> colour) : out_(out) {
  if (colour) {
    colour_ = *colour;
  } else {
    const char* term = std::getenv("TERM");
    colour_ = isatty(fileno(out)) != 0 && std::getenv("NO_COLOR") == nullptr &&
              (term == nullptr || std::string(term) != "dumb");
  }
}

void ConsoleSink::on_finding(const Finding& f) {
  const std::string severity(severity_name(f.severity));
  std::fprintf(out_, "tfdebug: %s%s%s [%s] %s\n", colour_ ? colour_of(f.severity) : "", severity.c_str(),
               colour_ ? "\033[0m" : "", f.rule.c_str(), f.message.c_str());
  std::fflush(out_);
}

void ConsoleSink::on_run_end(const RunSummary& s) {
  std::int64_t errors = 0;
  std::int64_t warnings = 0;
  for (const Finding& f : s.findings) {
    errors += f.severity == Severity::error ? 1 : 0;
    warnings += f.severity == Severity::warning ? 1 : 0;
  }
  std::fprintf(out_, "tfdebug: %lld steps, %lld observations: %lld errors, %lld warnings\n",
               static_cast<long long>(s.steps), static_cast<long long>(s.observations),
               static_cast<long long>(errors), static_cast<long long>(warnings));
  for (const Finding& f : s.findings) {
    const std::string severity(severity_name(f.severity));
    const std::string place = f.module.empty() ? f.op : f.op.empty() ? f.module : f.module + " / " + f.op;
    std::fprintf(out_, "  %s%-7s%s %-20s step %-6lld %-9s %s (x%lld)\n", colour_ ? colour_of(f.severity) : "",
                 severity.c_str(), colour_ ? "\033[0m" : "", f.rule.c_str(), static_cast<long long>(f.step),
                 std::string(phase_name(f.phase)).c_str(), place.c_str(), static_cast<long long>(f.count));
    if (!f.suggestion.empty()) std::fprintf(out_, "          try: %s\n", f.suggestion.c_str());
  }
  if (s.flight_recorder) std::fprintf(out_, "  flight recorder: %s\n", s.flight_recorder->string().c_str());
  std::fflush(out_);
}

JsonReportSink::JsonReportSink(std::filesystem::path path) : path_(std::move(path)) {}

void JsonReportSink::on_finding(const Finding& /*finding*/) {}

void JsonReportSink::on_run_end(const RunSummary& summary) {
  detail::write_text_file(path_, detail::report_json(summary).dump(1) + "\n");
}

}  // namespace tfdebug
