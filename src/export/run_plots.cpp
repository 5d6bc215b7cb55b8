#include "tfdebug/export/run_plots.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "tfdebug/core/error.hpp"
#include "tfdebug/export/metrics_files.hpp"
#include "tfdebug/viz/plot.hpp"

namespace tfdebug {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// One value per module per step, NaN where a step has none.
struct Series {
  std::map<std::string, std::vector<double>> by_module;
  void set(const std::string& module, std::size_t step_index, double value) {
    auto& values = by_module[module];
    if (values.size() <= step_index) values.resize(step_index + 1, kNan);
    values[step_index] = value;
  }
  void pad(std::size_t steps) {
    for (auto& [module, values] : by_module) values.resize(steps, kNan);
  }
};

struct RunData {
  std::vector<double> steps;
  std::vector<double> loss;
  Series grad_norm, update_ratio, abs_max, dead;
};

std::string module_name(const std::string& module) {
  return module.empty() ? "(top level)" : module;
}

RunData read(const std::filesystem::path& path) {
  RunData run;
  read_metrics_jsonl(path, [&](const StepMetrics& m) {
    const std::size_t i = run.steps.size();
    run.steps.push_back(static_cast<double>(m.step));
    run.loss.push_back(m.loss ? *m.loss : kNan);
    for (const ModuleMetrics& module : m.modules) {
      const std::string name = module_name(module.module);
      if (module.grad_norm) run.grad_norm.set(name, i, *module.grad_norm);
      if (module.update_ratio) run.update_ratio.set(name, i, *module.update_ratio);
      if (module.activations) {
        run.abs_max.set(name, i, module.activations->nonfinite > 0 ? kNan : module.activations->abs_max);
        if (module.activations->dead_fraction) run.dead.set(name, i, *module.activations->dead_fraction);
      }
    }
  });
  for (Series* s : {&run.grad_norm, &run.update_ratio, &run.abs_max, &run.dead}) s->pad(run.steps.size());
  return run;
}

// The largest value of each group of `per` steps; NaN when any of them is NaN (a NaN step must
// stay visible), the group's first step as its label.
std::vector<double> columns_of(const std::vector<double>& values, std::size_t per) {
  std::vector<double> out;
  for (std::size_t i = 0; i < values.size(); i += per) {
    double top = -std::numeric_limits<double>::infinity();
    bool any = false, nan = false;
    for (std::size_t k = i; k < std::min(values.size(), i + per); ++k) {
      if (std::isnan(values[k])) {
        nan = true;
      } else {
        top = std::max(top, values[k]);
        any = true;
      }
    }
    out.push_back(nan || !any ? kNan : top);
  }
  return out;
}

class Writer {
 public:
  Writer(const std::filesystem::path& dir, const RunPlotOptions& options, RunPlots& out)
      : dir_(dir), options_(options), out_(out) {}

  void save(const viz::Plot& plot, const std::string& name, viz::Size size) {
    const std::filesystem::path path = dir_ / (name + "." + options_.format);
    viz::save(plot, path, size);
    out_.files.push_back(path);
  }

 private:
  std::filesystem::path dir_;
  RunPlotOptions options_;
  RunPlots& out_;
};

bool spans_decades(const std::vector<double>& values, double decades) {
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (double v : values) {
    if (std::isfinite(v) && v > 0) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  return hi > 0 && hi / lo > std::pow(10.0, decades);
}

viz::Heatmap module_heatmap(const Series& series, const RunData& run, std::size_t per,
                            const std::string& title, const std::string& value_title, viz::Scale scale) {
  viz::Heatmap h;
  h.title = title;
  h.x_title = per > 1 ? "step (each column the largest of " + std::to_string(per) + " steps)" : "step";
  h.y_title = "module";
  h.value_title = value_title;
  h.scale = scale;
  h.rows = series.by_module.size();
  for (const auto& [module, values] : series.by_module) {
    h.row_labels.push_back(module);
    const std::vector<double> columns = columns_of(values, per);
    h.values.insert(h.values.end(), columns.begin(), columns.end());
  }
  h.cols = h.rows > 0 ? h.values.size() / h.rows : 0;
  for (std::size_t c = 0; c < h.cols; ++c) h.col_labels.push_back(viz::format_value(run.steps[c * per]));
  return h;
}

viz::Size heatmap_size(std::size_t rows) {
  // 22 pixels a row: room for every module's name beside its row.
  return {1100, static_cast<int>(std::clamp<std::size_t>(rows * 22 + 140, 360, 4000))};
}

}  // namespace

RunPlots write_run_plots(const std::filesystem::path& run_dir, const std::filesystem::path& dir,
                         const RunPlotOptions& options) {
  if (!viz::format_for("x." + options.format)) {
    throw Error("unknown picture format '" + options.format + "' (expected png, svg or pdf)");
  }
  const std::filesystem::path metrics = run_dir / "metrics.jsonl";
  if (!std::filesystem::is_regular_file(metrics)) {
    throw Error(metrics.string() + ": no metrics.jsonl (is this a run directory of tfdebug?)");
  }
  const RunData run = read(metrics);
  RunPlots out;
  out.steps = static_cast<std::int64_t>(run.steps.size());
  if (run.steps.empty()) throw Error(metrics.string() + ": holds no step yet; there is nothing to draw");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(dir.string() + ": cannot create the folder: " + ec.message());
  Writer writer(dir, options, out);
  out.steps_per_column = (run.steps.size() + kMaxColumns - 1) / kMaxColumns;
  const std::size_t per = out.steps_per_column;
  out.modules = run.grad_norm.by_module.size();

  viz::LinePlot loss;
  loss.title = "loss";
  loss.x.title = "step";
  loss.x.integer = true;
  loss.y.title = "loss";
  if (spans_decades(run.loss, 2)) loss.y.scale = viz::Scale::log;
  loss.series.push_back({"", run.steps, run.loss});  // one series: no legend
  writer.save(loss, "loss", {900, 420});

  if (!run.grad_norm.by_module.empty()) {
    writer.save(module_heatmap(run.grad_norm, run, per, "gradient norm per module", "gradient norm (log)",
                               viz::Scale::log),
                "grad_norm", heatmap_size(run.grad_norm.by_module.size()));

    // The modules with the largest gradient norms, as lines one can read values off.
    std::vector<std::pair<double, std::string>> peaks;
    for (const auto& [module, values] : run.grad_norm.by_module) {
      double top = 0;
      for (double v : values) {
        if (std::isfinite(v)) top = std::max(top, v);
      }
      peaks.emplace_back(top, module);
    }
    std::sort(peaks.begin(), peaks.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    viz::LinePlot top;
    top.title = peaks.size() > kMaxLines
                    ? "gradient norm of the " + std::to_string(kMaxLines) + " modules with the largest (of " +
                          std::to_string(peaks.size()) + ")"
                    : "gradient norm per module";
    top.x.title = "step";
    top.x.integer = true;
    top.y.title = "gradient norm";
    top.y.scale = viz::Scale::log;
    for (std::size_t i = 0; i < peaks.size() && i < kMaxLines; ++i) {
      top.series.push_back({peaks[i].second, run.steps, run.grad_norm.by_module.at(peaks[i].second)});
    }
    writer.save(top, "grad_norm_top", {1000, 460});

    viz::BarChart flow;
    flow.title = "gradient flow: gradient norm per module over the run";
    flow.y.title = "gradient norm";
    flow.y.scale = viz::Scale::log;
    flow.horizontal = true;
    viz::BarGroup median{"median", {}}, largest{"largest", {}};
    for (const auto& [module, values] : run.grad_norm.by_module) {
      std::vector<double> finite;
      for (double v : values) {
        if (std::isfinite(v)) finite.push_back(v);
      }
      flow.categories.push_back(module);
      if (finite.empty()) {
        median.values.push_back(kNan);
        largest.values.push_back(kNan);
        continue;
      }
      std::nth_element(finite.begin(), finite.begin() + static_cast<std::ptrdiff_t>(finite.size() / 2),
                       finite.end());
      median.values.push_back(finite[finite.size() / 2]);
      largest.values.push_back(*std::max_element(finite.begin(), finite.end()));
    }
    flow.groups = {std::move(median), std::move(largest)};
    writer.save(
        flow, "gradient_flow",
        {1000, static_cast<int>(std::clamp<std::size_t>(flow.categories.size() * 22 + 120, 360, 4000))});
  }
  if (!run.update_ratio.by_module.empty()) {
    writer.save(module_heatmap(run.update_ratio, run, per, "update / weight ratio per module",
                               "update ratio (log)", viz::Scale::log),
                "update_ratio", heatmap_size(run.update_ratio.by_module.size()));
  }
  if (!run.abs_max.by_module.empty()) {
    writer.save(module_heatmap(run.abs_max, run, per, "largest |output| per module (grey: NaN or Inf in it)",
                               "largest |output| (log)", viz::Scale::log),
                "activations", heatmap_size(run.abs_max.by_module.size()));
  }
  if (!run.dead.by_module.empty()) {
    viz::Heatmap dead = module_heatmap(run.dead, run, per, "fraction of dead units per module",
                                       "dead fraction", viz::Scale::linear);
    dead.lo = 0;
    dead.hi = 1;
    writer.save(dead, "dead_units", heatmap_size(run.dead.by_module.size()));
  }
  return out;
}

}  // namespace tfdebug
