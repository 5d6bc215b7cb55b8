// The data of a run's HTML page (tfdebug/export/html_report.hpp): report.json, metrics.jsonl
// bucketed to a bounded number of points, the flight recorder's chain of ops around the first
// NaN/Inf, and profile.json when the run directory has one.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "html_data.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/read_file.hpp"
#include "tfdebug/export/html_report.hpp"
#include "tfdebug/export/metrics_files.hpp"
#include "tfdebug/io/model_file.hpp"
#include "tfdebug/session/run_report.hpp"
#include "tfdebug/version.hpp"

namespace tfdebug {
namespace {

using detail::html_number;
using nlohmann::json;

constexpr std::uint64_t kMaxSideFileBytes = std::uint64_t(256) << 20;

// Note [Step buckets]: a run of more steps than HtmlReportOptions::max_steps is shown in buckets
// of `stride` consecutive steps, each point at its first step (the per-module series, six per
// module, in buckets of max_module_steps). A point is the mean of the bucket's finite values (the
// maximum for counts and fractions whose peak is the news: NaN outputs, dead units), and
// non-finite when any step of the bucket was: a NaN is never averaged away. Values are rounded
// to 6 significant digits (the page shows 4). The page says when it buckets.
// 6 significant digits: JSON of 20-digit doubles would triple the page for nothing.
double rounded(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return std::strtod(text, nullptr);
}

struct Bucket {
  double sum = 0;
  double max = -INFINITY;
  std::int64_t finite = 0;
  double nonfinite = 0;  // the first NaN/Inf seen (0: none)
  bool any = false;

  void add(double v) {
    any = true;
    if (std::isfinite(v)) {
      sum += v;
      max = std::max(max, v);
      ++finite;
    } else if (nonfinite == 0) {
      nonfinite = v;
    }
  }
  json value(bool peak) const {
    if (!any) return nullptr;
    if (nonfinite != 0) return html_number(nonfinite);
    if (finite == 0) return nullptr;
    return rounded(peak ? max : sum / double(finite));
  }
};

struct Series {
  std::vector<Bucket> buckets;
  bool peak = false;
  json values() const {
    json out = json::array();
    for (const Bucket& b : buckets) out.push_back(b.value(peak));
    return out;
  }
};

json metrics_data(const std::filesystem::path& path, const RunSummary& summary,
                  const HtmlReportOptions& options, HtmlReportWritten& written) {
  // First pass: how many steps and which modules, so that the buckets are known up front.
  std::int64_t lines = 0;
  std::set<std::string> names;
  const MetricsFileRead read = read_metrics_jsonl(path, [&](const StepMetrics& m) {
    ++lines;
    for (const ModuleMetrics& module : m.modules) names.insert(module.module);
  });
  const auto stride_for = [&](std::size_t max) {
    max = std::max<std::size_t>(max, 1);
    return lines > 0 ? (std::size_t(lines) + max - 1) / max : 1;
  };
  const auto points_for = [&](std::size_t stride) {
    return lines > 0 ? (std::size_t(lines) + stride - 1) / stride : 0;
  };
  const std::size_t stride = stride_for(options.max_steps);
  const std::size_t points = points_for(stride);
  // The per-module series are many (modules x 6): coarser buckets (Note [Step buckets]).
  const std::size_t module_stride = std::max(stride, stride_for(options.max_module_steps));
  const std::size_t module_points = points_for(module_stride);

  // Modules named by a finding first (they are what the page links to), then in path order.
  std::vector<std::string> modules;
  std::set<std::string> chosen;
  for (const Finding& f : summary.findings) {
    if (modules.size() >= options.max_modules) break;
    if (names.count(f.module) != 0 && chosen.insert(f.module).second) modules.push_back(f.module);
  }
  for (const std::string& name : names) {
    if (modules.size() >= options.max_modules) break;
    if (chosen.insert(name).second) modules.push_back(name);
  }
  std::sort(modules.begin(), modules.end());
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < modules.size(); ++i) index[modules[i]] = i;

  const char* kinds[] = {"grad_norm",         "update_ratio",  "act_abs_max",
                         "act_zero_fraction", "act_nonfinite", "act_dead_fraction"};
  constexpr std::size_t kKinds = 6;
  std::vector<std::vector<Series>> per_module(kKinds, std::vector<Series>(modules.size()));
  for (std::size_t k = 0; k < kKinds; ++k) {
    for (Series& s : per_module[k]) {
      s.buckets.resize(module_points);
      s.peak = k >= 4;
    }
  }
  Series loss;
  loss.buckets.resize(points);
  std::vector<std::int64_t> steps, module_steps;
  steps.reserve(points);
  module_steps.reserve(module_points);
  std::int64_t line = 0;
  read_metrics_jsonl(path, [&](const StepMetrics& m) {
    if (line >= lines) return;  // the file grew between the passes (a live run): the rest waits
    const std::size_t b = std::size_t(line) / stride;
    const std::size_t mb = std::size_t(line) / module_stride;
    ++line;
    if (steps.size() <= b) steps.push_back(m.step);
    if (module_steps.size() <= mb) module_steps.push_back(m.step);
    if (m.loss) loss.buckets[b].add(*m.loss);
    for (const ModuleMetrics& module : m.modules) {
      const auto it = index.find(module.module);
      if (it == index.end()) continue;
      const std::size_t i = it->second;
      if (module.grad_norm) per_module[0][i].buckets[mb].add(*module.grad_norm);
      if (module.update_ratio) per_module[1][i].buckets[mb].add(*module.update_ratio);
      if (module.activations) {
        const ActivationSummary& a = *module.activations;
        per_module[2][i].buckets[mb].add(a.abs_max);
        per_module[3][i].buckets[mb].add(a.zero_fraction());
        per_module[4][i].buckets[mb].add(double(a.nonfinite));
        if (a.dead_fraction) per_module[5][i].buckets[mb].add(*a.dead_fraction);
      }
    }
  });
  steps.resize(std::min(steps.size(), points));
  module_steps.resize(std::min(module_steps.size(), module_points));

  json out = {{"steps", steps},
              {"stride", stride},
              {"module_steps", module_steps},
              {"module_stride", module_stride},
              {"lines", lines},
              {"cut_off", read.cut_off},
              {"modules_total", names.size()},
              {"modules", modules},
              {"loss", loss.values()}};
  for (std::size_t k = 0; k < kKinds; ++k) {
    json rows = json::array();
    bool any = false;
    for (const Series& s : per_module[k]) {
      rows.push_back(s.values());
      for (const Bucket& b : s.buckets) any = any || b.any;
    }
    out[kinds[k]] = any ? rows : json(nullptr);
  }
  written.steps_shown = points;
  written.step_bucket = stride;
  written.module_step_bucket = module_stride;
  return out;
}

// The part of a side file (flight_recorder.json, profile.json) the page needs; nlohmann's errors
// (a field of the wrong type) become one line naming the file.
json parse_side_file(const std::filesystem::path& path, const char* what) {
  const std::string text = read_regular_file(path.string(), kMaxSideFileBytes, what);
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object())
    throw Error(path.string() + ": not a JSON object: expected " + what);
  return doc;
}

double number_or_nan(const json& v) {
  if (v.is_number()) return v.get<double>();
  return NAN;  // null: no finite value
}

json recorded_op(const json& op, std::size_t index) {
  return {{"index", index},
          {"module", op.at("module").get<std::string>()},
          {"op", op.at("op").get<std::string>()},
          {"phase", op.at("phase").get<std::string>()},
          {"role", op.at("role").get<std::string>()},
          {"count", op.at("count").get<std::int64_t>()},
          {"nan", op.at("nan").get<std::int64_t>()},
          {"inf", op.at("inf").get<std::int64_t>()},
          {"min", html_number(number_or_nan(op.at("min")))},
          {"max", html_number(number_or_nan(op.at("max")))},
          {"mean", html_number(number_or_nan(op.value("mean", json())))},
          {"std", html_number(number_or_nan(op.value("std", json())))},
          {"abs_max", html_number(number_or_nan(op.at("abs_max")))}};
}

bool nonfinite_op(const json& op) {
  return op.at("nan").get<std::int64_t>() + op.at("inf").get<std::int64_t>() > 0;
}

json flight_data(const std::filesystem::path& path, const HtmlReportOptions& options) {
  const json doc = parse_side_file(path, "a flight recorder dump (docs/live-debugging.md)");
  try {
    const json& trigger = doc.at("trigger");
    const json& steps = doc.at("steps");
    if (!steps.is_array()) throw Error(path.string() + ": field 'steps': expected an array");
    const std::int64_t trigger_step = trigger.at("step").get<std::int64_t>();
    const std::string trigger_module = trigger.at("module").get<std::string>();
    const std::string trigger_op = trigger.at("op").get<std::string>();
    json out_steps = json::array();
    json chain = json::array();
    std::int64_t producer = -1;
    std::int64_t ops_in_step = 0;
    for (const json& s : steps) {
      const json& ops = s.at("ops");
      if (!ops.is_array()) throw Error(path.string() + ": field 'steps[].ops': expected an array");
      std::int64_t nonfinite = 0;
      for (const json& op : ops) nonfinite += nonfinite_op(op) ? 1 : 0;
      const std::int64_t step = s.at("step").get<std::int64_t>();
      out_steps.push_back({{"step", step},
                           // null: no loss, or a non-finite one (JSON has no NaN)
                           {"loss", s.contains("loss") && s.at("loss").is_number() ? s.at("loss") : json()},
                           {"ops", ops.size()},
                           {"nonfinite_ops", nonfinite},
                           {"dropped_ops", s.value("dropped_ops", std::int64_t(0))}});
      if (step != trigger_step) continue;
      // The op the trigger names, at its first non-finite output; else the first non-finite op.
      std::size_t at = ops.size();
      for (std::size_t i = 0; i < ops.size() && at == ops.size(); ++i) {
        if (nonfinite_op(ops[i]) && ops[i].at("module") == trigger_module && ops[i].at("op") == trigger_op)
          at = i;
      }
      for (std::size_t i = 0; i < ops.size() && at == ops.size(); ++i) {
        if (nonfinite_op(ops[i])) at = i;
      }
      if (at == ops.size()) at = 0;
      producer = ops.empty() ? -1 : std::int64_t(at);
      ops_in_step = std::int64_t(ops.size());
      const std::size_t from = at > options.chain_before ? at - options.chain_before : 0;
      const std::size_t to = std::min(ops.size(), at + options.chain_after + 1);
      for (std::size_t i = from; i < to; ++i) chain.push_back(recorded_op(ops[i], i));
    }
    json trigger_out = {{"rule", trigger.at("rule").get<std::string>()},
                        {"severity", trigger.value("severity", std::string("error"))},
                        {"step", trigger_step},
                        {"phase", trigger.value("phase", std::string())},
                        {"module", trigger_module},
                        {"op", trigger_op},
                        {"message", trigger.value("message", std::string())}};
    json evidence = json::array();
    if (trigger.contains("evidence") && trigger.at("evidence").is_object()) {
      for (const auto& [key, value] : trigger.at("evidence").items()) evidence.push_back({key, value});
    }
    trigger_out["evidence"] = evidence;
    return {{"trigger", trigger_out},
            {"steps", out_steps},
            {"chain", chain},
            {"producer", producer},
            {"ops_in_step", ops_in_step}};
  } catch (const json::exception& e) {
    throw Error(path.string() + ": not a flight recorder dump (docs/live-debugging.md): " + e.what());
  }
}

json profile_data(const std::filesystem::path& path) {
  const json doc = parse_side_file(path, "a profile (tfdebug demo --profile's profile.json)");
  if (doc.value("format", std::string()) != "tfdebug-profile")
    throw Error(path.string() + ": field 'format': expected \"tfdebug-profile\" (docs/profiling.md)");
  try {
    json modules = json::array();
    for (const json& m : doc.at("modules")) {
      modules.push_back({m.at("module").get<std::string>(), m.at("self_ns").get<double>(),
                         m.at("total_ns").get<double>(), m.at("self_flops").get<double>(),
                         m.at("total_flops").get<double>(), m.at("calls").get<std::int64_t>()});
    }
    // The ops that take the most time: a table of every op of a long profile says nothing more.
    std::vector<const json*> ops;
    for (const json& op : doc.at("ops")) ops.push_back(&op);
    std::stable_sort(ops.begin(), ops.end(), [](const json* a, const json* b) {
      return a->at("self_ns").get<double>() > b->at("self_ns").get<double>();
    });
    json top = json::array();
    for (std::size_t i = 0; i < ops.size() && i < 40; ++i) {
      const json& op = *ops[i];
      top.push_back({op.at("op").get<std::string>(), op.at("module").get<std::string>(),
                     op.at("phase").get<std::string>(), op.at("calls").get<std::int64_t>(),
                     op.at("self_ns").get<double>(), op.at("flops").get<double>(),
                     op.value("alloc_bytes", 0.0)});
    }
    json memory = nullptr;
    if (doc.contains("memory") && doc.at("memory").is_object()) {
      const json& m = doc.at("memory");
      json timeline = json::array();
      const json& points = m.at("timeline");
      // At most 2000 points: every k-th one, and the peak kept exactly by the page's summary.
      const std::size_t n = points.size();
      const std::size_t stride = n > 2000 ? (n + 1999) / 2000 : 1;
      for (std::size_t i = 0; i < n; i += stride)
        timeline.push_back({points[i].at(0).get<double>(), points[i].at(1).get<double>()});
      memory = {{"peak_bytes", m.value("peak_bytes", 0.0)},
                {"peak_op", m.value("peak_op", std::string())},
                {"peak_module", m.value("peak_module", std::string())},
                {"peak_ts_ns", m.value("peak_ts_ns", 0.0)},
                {"end_bytes", m.value("end_bytes", 0.0)},
                {"timeline", timeline}};
    }
    return {{"steps", doc.value("steps", std::int64_t(0))},
            {"step_ns", doc.value("step_ns", 0.0)},
            {"flops_per_s", doc.value("flops_per_s", 0.0)},
            {"modules", modules},
            {"ops", top},
            {"ops_total", ops.size()},
            {"memory", memory}};
  } catch (const json::exception& e) {
    throw Error(path.string() + ": not a profile (docs/profiling.md): " + e.what());
  }
}

// A section from a side file of the run directory (run_report_part); null when it is absent.
json side_part(const std::filesystem::path& run_dir, std::string_view part,
               const HtmlReportOptions& options) {
  std::error_code ec;
  if (part == "flight") {
    const std::filesystem::path dump = run_dir / "flight_recorder.json";
    return std::filesystem::exists(dump, ec) ? flight_data(dump, options) : json(nullptr);
  }
  if (part == "profile") {
    const std::filesystem::path profile = run_dir / "profile.json";
    return std::filesystem::exists(profile, ec) ? profile_data(profile) : json(nullptr);
  }
  if (part == "graph") {
    // The model's graph, when the run saved one (tfdebug demo --out writes model.onnx).
    const std::filesystem::path model = run_dir / "model.onnx";
    if (!std::filesystem::exists(model, ec)) return nullptr;
    const io::ModelFile file = io::ModelFile::open(model.string());
    if (const ModelGraph* graph = file.graph())
      return detail::html_graph(*graph, "model.onnx", options.max_graph_nodes);
    return nullptr;
  }
  throw Error("run_report_part: unknown part '" + std::string(part) + "'; expected flight, profile or graph");
}

}  // namespace

std::string run_report_data(const std::filesystem::path& run_dir, const HtmlReportOptions& options,
                            HtmlReportWritten* written) {
  HtmlReportWritten local;
  HtmlReportWritten& w = written != nullptr ? *written : local;
  std::error_code ec;
  if (!std::filesystem::is_directory(run_dir, ec))
    throw Error(run_dir.string() +
                ": not a folder: expected a run directory (RunConfig::run_dir, tfdebug demo --out)");
  const RunReport report = read_run_report(run_dir / "report.json");
  const RunSummary& s = report.summary;

  json findings = json::array();
  for (const Finding& f : s.findings) findings.push_back(detail::html_finding(f));
  json config = json::array();
  for (const auto& [key, value] : report.config) config.push_back({key, value});
  json spectral = json::array();
  for (const SpectralMeasurement& m : s.spectral)
    spectral.push_back(
        {m.module, m.parameter, m.step, html_number(m.spectral_norm), html_number(m.stable_rank)});

  json doc = {{"kind", "run"},
              {"generator", "tfdebug " TFDEBUG_VERSION_STRING},
              {"run",
               {{"dir", run_dir.string()},
                {"version", report.version},
                {"complete", s.complete},
                {"steps", s.steps},
                {"first_step", s.first_step},
                {"last_step", s.last_step},
                {"observations", s.observations},
                {"stopped", s.stopped},
                {"dropped",
                 {{"findings", s.dropped_findings},
                  {"untracked_observations", s.untracked_observations},
                  {"op_summaries", s.dropped_op_summaries},
                  {"sink_events", s.dropped_sink_events}}},
                {"hook_errors", s.hook_errors}}},
              {"findings", findings},
              {"config", config},
              {"spectral", spectral},
              {"metrics", nullptr},
              {"flight", nullptr},
              {"profile", nullptr},
              {"graph", nullptr},
              {"analyses", json::array()},
              {"analysis_notes", json::array()}};
  const std::filesystem::path metrics = run_dir / "metrics.jsonl";
  if (std::filesystem::exists(metrics, ec)) doc["metrics"] = metrics_data(metrics, s, options, w);
  // report.json names the dump by its file name; a live run wrote it into the run directory.
  if (s.flight_recorder) {
    const std::filesystem::path dump = run_dir / s.flight_recorder->filename();
    if (std::filesystem::exists(dump, ec)) doc["flight"] = flight_data(dump, options);
  }
  doc["profile"] = side_part(run_dir, "profile", options);
  doc["graph"] = side_part(run_dir, "graph", options);
  // What tfdebug explain, attack and robust saved here (--run-dir).
  doc["analyses"] = detail::html_analyses(run_dir, options.max_analyses, doc["analysis_notes"]);
  return detail::html_dump(doc);
}

std::string run_report_part(const std::filesystem::path& run_dir, std::string_view part,
                            const HtmlReportOptions& options) {
  return detail::html_dump(side_part(run_dir, part, options));
}

std::string html_finding_json(const Finding& finding) {
  return detail::html_dump(detail::html_finding(finding));
}

}  // namespace tfdebug
