// tfdebug report RUN_DIR: what a debugged run's directory says (findings by severity, steps,
// finished or killed), and every export rebuilt from it after the fact (docs/report.md):
// --xlsx, --tensorboard, --mlflow, --csv, through the sinks a live run writes with
// (tfdebug::rebuild_exports). A killed run works too: report.json is rewritten as it goes
// ("complete": false) and metrics.jsonl is appended every step.
#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "findings_text.hpp"
#include "terminal.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/export/run_plots.hpp"
#include "tfdebug/export/run_rebuild.hpp"

namespace tfdebug::cli {
namespace {

struct ReportArgs {
  std::string run_dir;
  std::string xlsx;
  std::string tensorboard;
  std::string mlflow;
  std::string csv;
  std::string plots;
  std::string plot_format = "png";
  bool json = false;
};

// Text from a file, for a terminal: control characters (an escape sequence, a line break) as '?'.
std::string printable(const std::string& text) {
  std::string out = text;
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return out;
}

void print_summary(const ReportArgs& args, const RunRebuild& run, std::int64_t counts[3]) {
  const RunSummary& s = run.summary;
  const bool colour = use_colour(stdout);
  KeyValueTable table;
  table.add("run directory", printable(args.run_dir));
  table.add("status", s.complete ? paint("complete", Tone::good, colour)
                                 : paint("did not finish (killed, or still running)", Tone::bad, colour));
  table.add("steps", format_count(s.steps) + (s.steps > 0 ? " (" + std::to_string(s.first_step) + "-" +
                                                                std::to_string(s.last_step) + ")"
                                                          : std::string()));
  if (run.metrics) {
    std::string text = plural(run.metrics->steps, "step", "steps");
    if (run.metrics->cut_off) text += "; its last line was cut off (the run was killed while writing it)";
    table.add("metrics.jsonl", text);
  } else {
    table.add("metrics.jsonl", "none");
  }
  table.add("findings", severity_counts_text({.error = counts[2], .warning = counts[1], .info = counts[0]}));
  table.add("flight recorder", s.flight_recorder ? printable(s.flight_recorder->string()) : "none");
  if (s.stopped) table.add("stopped", "at the first error (stop_on_error)");
  if (!s.hook_errors.empty()) table.add("hook errors", format_count(std::int64_t(s.hook_errors.size())));
  table.print(stdout);
  for (const Finding* f : by_severity(s.findings)) {  // errors first
    print_finding_line(stdout, f->severity,
                       printable(f->rule) + " step " + std::to_string(f->step) + " (" +
                           plural(f->count, "step", "steps") + ") " +
                           printable(f->module.empty() ? "(top level)" : f->module) + " " + printable(f->op) +
                           ": " + printable(f->message),
                       colour);
  }
}

void print_json(const RunRebuild& run, std::int64_t counts[3]) {
  const RunSummary& s = run.summary;
  nlohmann::ordered_json findings = nlohmann::ordered_json::array();
  for (const Finding& f : s.findings) {
    findings.push_back({{"rule", f.rule},
                        {"severity", severity_name(f.severity)},
                        {"step", f.step},
                        {"last_step", f.last_step},
                        {"count", f.count},
                        {"module", f.module},
                        {"op", f.op},
                        {"message", f.message}});
  }
  nlohmann::ordered_json metrics = nullptr;
  if (run.metrics) {
    metrics = {{"steps", run.metrics->steps},
               {"first_step", run.metrics->first_step},
               {"last_step", run.metrics->last_step},
               {"cut_off", run.metrics->cut_off}};
  }
  const nlohmann::ordered_json doc = {
      {"complete", s.complete},
      {"steps", s.steps},
      {"first_step", s.first_step},
      {"last_step", s.last_step},
      {"counts", {{"error", counts[2]}, {"warning", counts[1]}, {"info", counts[0]}}},
      {"stopped", s.stopped},
      {"metrics", metrics},
      {"flight_recorder", s.flight_recorder ? nlohmann::ordered_json(s.flight_recorder->string()) : nullptr},
      {"findings", findings}};
  std::puts(doc.dump(1).c_str());
}

int run_report(const ReportArgs& args) {
  RebuildTargets targets;
  if (!args.xlsx.empty()) targets.xlsx = args.xlsx;
  if (!args.tensorboard.empty()) targets.tensorboard = args.tensorboard;
  if (!args.mlflow.empty()) targets.mlflow = args.mlflow;
  if (!args.csv.empty()) targets.csv = args.csv;
  const RunRebuild run = rebuild_exports(args.run_dir, targets);
  std::int64_t counts[3] = {0, 0, 0};
  for (const Finding& f : run.summary.findings) ++counts[static_cast<int>(f.severity)];
  if (args.json) {
    print_json(run, counts);
  } else if (!targets.any()) {
    print_summary(args, run, counts);
  } else {
    for (const auto* target : {&targets.xlsx, &targets.tensorboard, &targets.mlflow, &targets.csv}) {
      if (*target) std::printf("wrote %s\n", printable(**target).c_str());
    }
  }
  if (!args.plots.empty()) {
    RunPlotOptions plot_options;
    plot_options.format = args.plot_format;
    const RunPlots plots = write_run_plots(args.run_dir, args.plots, plot_options);
    std::FILE* out = args.json ? stderr : stdout;  // --json: stdout is one JSON document
    std::fprintf(out, "plots: %s in %s (%s, %s", plural(std::int64_t(plots.files.size()), "picture").c_str(),
                 printable(args.plots).c_str(), plural(plots.steps, "step").c_str(),
                 plural(std::int64_t(plots.modules), "module").c_str());
    if (plots.steps_per_column > 1)
      std::fprintf(out, "; heatmap columns of %zu steps", plots.steps_per_column);
    std::fprintf(out, ")\n");
  }
  return counts[2] > 0 ? 1 : 0;
}

}  // namespace

void register_report(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "report", "Summarise a debugged run's directory, and rebuild its exports (a killed run's too)");
  cmd->add_option("run_dir", args->run_dir, "The run directory (RunConfig::run_dir, tfdebug demo --out)")
      ->required();
  cmd->add_option("--xlsx", args->xlsx, "Write the run as an Excel workbook");
  cmd->add_option("--tensorboard", args->tensorboard, "Write the run as a TensorBoard run in this folder");
  cmd->add_option("--mlflow", args->mlflow, "Write the run into this MLflow file store");
  cmd->add_option("--csv", args->csv, "Write the per-step metrics as CSV (long form)");
  cmd->add_option("--plots", args->plots,
                  "Draw the run into this folder: loss, gradient norm and update ratio per module over steps "
                  "(heatmaps), gradient flow, activations (docs/visualization.md)");
  cmd->add_option("--plot-format", args->plot_format, "Pictures of --plots as png, svg or pdf")
      ->check(CLI::IsMember({"png", "svg", "pdf"}))
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "Print the summary as JSON");
  cmd->footer("Exit code: 0 no error-level finding; 1 the run has one; 2 a missing or malformed input.");
  cmd->callback([args, &exit_code] { exit_code = run_report(*args); });
}

}  // namespace tfdebug::cli
