// tfdebug plot RUN_DIR|METRICS.jsonl --metric NAME: a metric series of a run, drawn in the
// terminal (braille, or ASCII on a dumb terminal) at the terminal's width; --list, --json.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "json_output.hpp"
#include "run_series.hpp"
#include "safe_text.hpp"
#include "suggest.hpp"
#include "terminal.hpp"
#include "terminal_size.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/viz/plot.hpp"
#include "tfdebug/viz/terminal_plot.hpp"

namespace tfdebug::cli {
namespace {

// Past this many series a plot is a tangle (and the palette repeats): the largest are shown.
constexpr std::size_t kMaxShown = 8;

struct PlotArgs {
  std::string path;
  std::string metric = "loss";
  std::vector<std::string> modules;
  std::string scale = "auto";
  int width = 0;
  int height = 0;
  bool list = false;
  bool json = false;
  std::string output;  // -o: a PNG, SVG or PDF instead of the terminal
};

std::string module_name(const std::string& module) {
  return module.empty() ? "(top level)" : module;
}

int run_list(const PlotArgs& args, const std::filesystem::path& file) {
  const MetricsIndex index = index_metrics(file);
  if (args.json) {
    nlohmann::json metrics = nlohmann::json::array();
    for (const auto& [name, modules] : index.metrics) {
      nlohmann::json m = {{"metric", name}};
      if (name != "loss") {
        nlohmann::json names = nlohmann::json::array();
        for (const std::string& module : modules) names.push_back(module_name(module));
        m["modules"] = names;
      }
      metrics.push_back(m);
    }
    std::printf("%s\n", json_text({{"file", file.string()},
                                   {"steps", index.read.steps},
                                   {"first_step", index.read.first_step},
                                   {"last_step", index.read.last_step},
                                   {"metrics", metrics}})
                            .c_str());
    return 0;
  }
  const bool colour = use_colour(stdout);
  std::printf("%s: %s steps", terminal_safe(file.string()).c_str(), format_count(index.read.steps).c_str());
  if (index.read.steps > 0)
    std::printf(" (%lld-%lld)", static_cast<long long>(index.read.first_step),
                static_cast<long long>(index.read.last_step));
  std::printf("\n");
  const int width = terminal_size(stdout).columns;
  for (const auto& [name, modules] : index.metrics) {
    std::string what;
    for (const MetricInfo& info : metric_infos()) {
      if (info.name == name) what = info.what;
    }
    std::printf("\n%s  %s\n", paint(name, Tone::bold, colour).c_str(),
                paint(what, Tone::dim, colour).c_str());
    if (name == "loss") continue;
    // The modules, wrapped to the width.
    std::string line = "  ";
    for (const std::string& module : modules) {
      const std::string shown = terminal_safe(module_name(module));
      if (line.size() > 2 && static_cast<int>(display_width(line) + shown.size() + 2) > width) {
        std::printf("%s\n", line.c_str());
        line = "  ";
      }
      line += shown + "  ";
    }
    std::printf("%s\n", line.c_str());
  }
  if (index.metrics.empty()) std::printf("no series: the file has no steps\n");
  return 0;
}

// The series the user asked for: --module names (each must exist), else all.
std::vector<MetricSeries> select(std::vector<MetricSeries> all, const PlotArgs& args,
                                 const std::string& metric, const std::filesystem::path& file) {
  if (args.modules.empty()) return all;
  std::vector<std::string> names;
  names.reserve(all.size());
  for (const MetricSeries& s : all) names.push_back(module_name(s.module));
  std::vector<MetricSeries> out;
  for (const std::string& wanted : args.modules) {
    const auto it = std::find(names.begin(), names.end(), wanted);
    if (it == names.end()) {
      const auto near = closest_name(wanted, names);
      throw Error("--module '" + wanted + "': " + file.string() + " has no " + metric + " for that module" +
                  (near ? "; did you mean '" + *near + "'?" : "") + " (--list lists the modules)");
    }
    out.push_back(all[static_cast<std::size_t>(it - names.begin())]);
  }
  return out;
}

double largest(const MetricSeries& s) {
  double top = -INFINITY;
  for (double v : s.values) {
    if (std::isfinite(v)) top = std::max(top, v);
  }
  return top;
}

viz::Scale pick_scale(const std::string& scale, const std::vector<MetricSeries>& series) {
  if (scale == "linear") return viz::Scale::linear;
  if (scale == "log") return viz::Scale::log;
  // auto: log when every finite value is positive and they span two decades or more.
  double lo = INFINITY, hi = -INFINITY;
  for (const MetricSeries& s : series) {
    for (double v : s.values) {
      if (!std::isfinite(v)) continue;
      if (v <= 0) return viz::Scale::linear;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  return lo <= hi && hi / lo >= 100 ? viz::Scale::log : viz::Scale::linear;
}

int run_plot(const PlotArgs& args) {
  if (args.scale != "auto" && args.scale != "linear" && args.scale != "log")
    throw Error("--scale '" + args.scale + "': expected auto, linear or log");
  if (args.width < 0 || args.width > 10'000) throw Error("--width must be between 20 and 10000 columns");
  if (args.height < 0 || args.height > 10'000) throw Error("--height must be between 6 and 10000 lines");
  const std::filesystem::path file = metrics_file_of(args.path);
  if (args.list) return run_list(args, file);
  const std::optional<std::string> metric = canonical_metric(args.metric);
  if (!metric) {
    const auto near = closest_name(args.metric, metric_spellings());
    throw Error("--metric '" + args.metric + "': not a metric of metrics.jsonl" +
                (near ? "; did you mean '" + *near + "'?" : "") + " (--list lists what " + file.string() +
                " holds)");
  }
  MetricsFileRead read;
  std::vector<MetricSeries> all = read_metric_series(file, *metric, &read);
  if (all.empty())
    throw Error(file.string() + ": no " + *metric + " values in " + std::to_string(read.steps) +
                " steps (--list lists what it holds)");
  const std::size_t modules = all.size();
  std::vector<MetricSeries> series = select(std::move(all), args, *metric, file);

  if (args.json) {
    nlohmann::json out = {{"file", file.string()}, {"metric", *metric}, {"steps", read.steps}};
    nlohmann::json list = nlohmann::json::array();
    for (const MetricSeries& s : series) {
      nlohmann::json values = nlohmann::json::array();
      for (double v : s.values) values.push_back(json_number(v));
      nlohmann::json steps = nlohmann::json::array();
      for (double step : s.steps) steps.push_back(static_cast<std::int64_t>(step));  // steps are integers
      nlohmann::json entry = {{"steps", steps}, {"values", values}};
      if (metric != "loss") entry["module"] = module_name(s.module);
      list.push_back(entry);
    }
    out["series"] = list;
    std::printf("%s\n", json_text(out).c_str());
    return 0;
  }

  // Too many to read apart: the ones that reach the largest values.
  std::string note;
  if (series.size() > kMaxShown) {
    std::stable_sort(series.begin(), series.end(),
                     [](const MetricSeries& a, const MetricSeries& b) { return largest(a) > largest(b); });
    note = std::to_string(kMaxShown) + " of " + std::to_string(series.size()) +
           " modules shown (those with the largest values); --module NAME for others, --list for all";
    series.resize(kMaxShown);
  }
  const viz::Scale scale = pick_scale(args.scale, series);
  if (!args.output.empty()) {
    // The same series as a picture (viz::save): the format follows the extension.
    viz::LinePlot picture;
    picture.title =
        *metric + (series.size() == 1 && *metric != "loss" ? " of " + module_name(series[0].module) : "");
    picture.x.title = "step";
    picture.y.title = *metric;
    picture.y.scale = scale;
    for (const MetricSeries& s : series)
      picture.series.push_back(
          {.name = series.size() == 1 ? s.metric : module_name(s.module), .x = s.steps, .y = s.values});
    viz::save(picture, args.output);
    const std::string what = *metric == "loss" ? std::string("the loss")
                                               : *metric + " of " + std::to_string(series.size()) +
                                                     (series.size() == 1 ? " module" : " modules");
    std::printf("wrote %s: %s over %s\n", terminal_safe(args.output).c_str(), what.c_str(),
                (format_count(read.steps) + (read.steps == 1 ? " step" : " steps")).c_str());
    if (!note.empty()) std::printf("%s\n", note.c_str());
    return 0;
  }
  viz::TerminalLinePlot plot;
  plot.y_scale = scale;
  plot.title = *metric;
  if (series.size() == 1 && *metric != "loss")
    plot.title += " of " + module_name(series[0].module);
  else if (*metric != "loss")
    plot.title += ", " + std::to_string(modules) + (modules == 1 ? " module" : " modules");
  plot.title += plot.y_scale == viz::Scale::log ? " (log scale)" : "";
  plot.title +=
      " - " + file.string() + ", " + format_count(read.steps) + (read.steps == 1 ? " step" : " steps");
  plot.title = terminal_safe(plot.title);
  for (const MetricSeries& s : series) {
    viz::Series out;
    out.name = terminal_safe(series.size() == 1 ? s.metric : module_name(s.module));
    out.x = s.steps;
    out.y = s.values;
    plot.series.push_back(std::move(out));
  }
  const TerminalSize size = terminal_size(stdout);
  viz::TerminalOptions options;
  options.width = args.width > 0 ? args.width : size.columns;
  options.height = args.height > 0 ? args.height : std::clamp(size.rows - 2, 6, 20);
  options.glyphs = viz::terminal_glyphs_from_environment();
  options.colour = use_colour(stdout);
  for (const std::string& line : viz::render_terminal(plot, options)) std::printf("%s\n", line.c_str());
  if (!note.empty()) std::printf("%s\n", paint(note, Tone::dim, options.colour).c_str());
  if (read.cut_off)
    std::printf("%s\n", paint("the file's last line was cut off (a run still writing, or killed): left out",
                              Tone::dim, options.colour)
                            .c_str());
  return 0;
}

}  // namespace

void register_plot(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<PlotArgs>();
  CLI::App* cmd = app.add_subcommand(
      "plot", "Plot a metric of a run in the terminal: loss, grad_norm, update_ratio, activations");
  cmd->add_option("run", args->path, "A run directory (its metrics.jsonl) or a metrics.jsonl file")
      ->required();
  cmd->add_option("--metric,-m", args->metric,
                  "loss, grad_norm, update_ratio, activations.abs_max, activations.zero_fraction, "
                  "activations.nonfinite, activations.dead_fraction (also without 'activations.')")
      ->capture_default_str();
  cmd->add_option("--module", args->modules,
                  "Only this module's series (repeat for several; '(top level)' for the top level). "
                  "Without it: every module, at most 8 drawn (the largest)");
  cmd->add_option("--scale", args->scale,
                  "y axis: auto (log when the values span two decades), linear or log")
      ->capture_default_str();
  cmd->add_option("--width", args->width, "Columns (default: the terminal's, COLUMNS, or 80)");
  cmd->add_option("--height", args->height, "Lines (default: up to 20, fitting the terminal)");
  cmd->add_flag("--list", args->list, "List the metrics and modules the run has");
  cmd->add_flag("--json", args->json, "Print the series' numbers as JSON (NaN and Inf as null)");
  cmd->add_option("-o,--output", args->output,
                  "Save the plot as a picture instead: FILE.png, FILE.svg or FILE.pdf (800 x 500)");
  cmd->footer(
      "\nExamples:\n"
      "  tfdebug plot runs/exp1                          the loss\n"
      "  tfdebug plot runs/exp1 -m grad_norm --module blocks.0.mlp.fc2\n"
      "  tfdebug plot runs/exp1/metrics.jsonl --list     what there is to plot\n"
      "  tfdebug plot runs/exp1 -m update_ratio -o update_ratio.png\n"
      "Exit codes: 0 plotted, 2 bad input (no such file, metric or module).");
  cmd->callback([args, &exit_code] { exit_code = run_plot(*args); });
}

}  // namespace tfdebug::cli
