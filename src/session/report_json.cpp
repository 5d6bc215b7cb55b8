#include "report_json.hpp"

#include <cmath>
#include <fstream>
#include <string>

#include "tfdebug/core/error.hpp"
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

nlohmann::ordered_json evidence_json(const EvidenceValue& value) {
  if (const double* x = std::get_if<double>(&value)) {
    // Counts are numbers too: written as integers when they are.
    if (std::isfinite(*x) && std::trunc(*x) == *x && std::abs(*x) < 9007199254740992.0)
      return static_cast<std::int64_t>(*x);
    return number(*x);
  }
  if (const auto* list = std::get_if<std::vector<std::int64_t>>(&value)) return *list;
  return std::get<std::string>(value);
}

namespace {
nlohmann::ordered_json evidence_object(const std::vector<Evidence>& list) {
  nlohmann::ordered_json evidence = nlohmann::ordered_json::object();
  for (const Evidence& e : list) evidence[e.key] = evidence_json(e.value);
  return evidence;
}

nlohmann::ordered_json occurrence_json(const std::optional<Occurrence>& o) {
  if (!o) return nullptr;
  return {{"step", o->step}, {"message", o->message}, {"evidence", evidence_object(o->evidence)}};
}
}  // namespace

nlohmann::ordered_json finding_json(const Finding& f) {
  return {{"rule", f.rule},
          {"severity", severity_name(f.severity)},
          {"step", f.step},
          {"phase", phase_name(f.phase)},
          {"module", f.module},
          {"op", f.op},
          {"message", f.message},
          {"suggestion", f.suggestion},
          {"count", f.count},
          {"last_step", f.last_step},
          {"evidence", evidence_object(f.evidence)},
          {"latest", occurrence_json(f.latest)},
          {"worst", occurrence_json(f.worst)}};
}

nlohmann::ordered_json report_json(const RunSummary& s, const ConfigEntries& config) {
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
  nlohmann::ordered_json config_json = nlohmann::ordered_json::object();
  for (const auto& [key, value] : config) config_json[key] = value;
  return {{"tool", "tfdebug"},
          {"version", TFDEBUG_VERSION_STRING},
          {"complete", s.complete},
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
            {"op_summaries", s.dropped_op_summaries},
            {"sink_events", s.dropped_sink_events}}},
          {"hook_errors", s.hook_errors},
          {"config", config_json}};
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

}  // namespace tfdebug
