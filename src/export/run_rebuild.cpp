#include "tfdebug/export/run_rebuild.hpp"

#include <algorithm>
#include <memory>
#include <vector>

#include "tfdebug/core/error.hpp"
#include "tfdebug/export/mlflow_sink.hpp"
#include "tfdebug/export/tensorboard_sink.hpp"
#include "tfdebug/export/xlsx_sink.hpp"

namespace tfdebug {

RunRebuild rebuild_exports(const std::filesystem::path& run_dir, const RebuildTargets& targets) {
  std::error_code ec;
  if (!std::filesystem::is_directory(run_dir, ec))
    throw Error(run_dir.string() +
                ": not a folder: expected a run directory (RunConfig::run_dir, tfdebug demo --out)");
  RunRebuild out;
  out.report = read_run_report(run_dir / "report.json");
  out.summary = out.report.summary;
  // report.json names the dump by its file name; a live sink had it in the run directory.
  if (out.summary.flight_recorder)
    out.summary.flight_recorder = run_dir / out.summary.flight_recorder->filename();
  const std::filesystem::path metrics = run_dir / "metrics.jsonl";
  const bool has_metrics = std::filesystem::exists(metrics, ec);
  if (!has_metrics && targets.any())
    throw Error(metrics.string() +
                ": not found: the exports are rebuilt from the per-step metrics a run writes with a "
                "JsonlMetricsSink (tfdebug demo --out writes it)");

  // Created before anything is read, so that a target that cannot be written fails first.
  std::vector<std::shared_ptr<Sink>> sinks;
  if (targets.xlsx) sinks.push_back(std::make_shared<XlsxSink>(*targets.xlsx, out.report.config));
  if (targets.tensorboard) sinks.push_back(std::make_shared<TensorBoardSink>(*targets.tensorboard));
  if (targets.csv) sinks.push_back(std::make_shared<CsvMetricsSink>(*targets.csv));
  if (targets.mlflow) {
    std::string name = targets.mlflow_run_name;
    if (name.empty()) name = std::filesystem::absolute(run_dir, ec).lexically_normal().filename().string();
    if (name.empty())
      name = std::filesystem::absolute(run_dir, ec).lexically_normal().parent_path().filename().string();
    sinks.push_back(
        std::make_shared<MlflowSink>(*targets.mlflow, targets.mlflow_experiment, name, out.report.config));
  }
  if (!has_metrics) return out;

  // A live run hands each sink a finding before the metrics of the step it was found in (the
  // Session emits during the step, on_step comes at its end), so the findings go in by step.
  const std::vector<Finding>& findings = out.summary.findings;
  std::vector<const Finding*> by_step;
  by_step.reserve(findings.size());
  for (const Finding& f : findings) by_step.push_back(&f);
  std::stable_sort(by_step.begin(), by_step.end(),
                   [](const Finding* a, const Finding* b) { return a->step < b->step; });
  std::size_t next = 0;
  out.metrics = read_metrics_jsonl(metrics, [&](const StepMetrics& m) {
    for (; next < by_step.size() && by_step[next]->step <= m.step; ++next)
      for (const auto& sink : sinks) sink->on_finding(*by_step[next]);
    for (const auto& sink : sinks) sink->on_step(m);
  });
  for (; next < by_step.size(); ++next)
    for (const auto& sink : sinks) sink->on_finding(*by_step[next]);
  if (!out.summary.complete && out.metrics->steps > 0) {
    out.summary.steps = out.metrics->steps;
    out.summary.first_step = out.metrics->first_step;
    out.summary.last_step = out.metrics->last_step;
  }
  for (const auto& sink : sinks) sink->on_run_end(out.summary);
  return out;
}

}  // namespace tfdebug
