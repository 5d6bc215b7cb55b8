#include "run_series.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "tfdebug/core/error.hpp"

namespace tfdebug::cli {
namespace {

using Getter = std::optional<double> (*)(const ModuleMetrics&);

struct MetricDef {
  MetricInfo info;
  std::string alias;  // empty: none
  Getter get;         // nullptr: loss
};

std::optional<double> activation(const ModuleMetrics& m, double (*field)(const ActivationSummary&)) {
  if (!m.activations) return std::nullopt;
  return field(*m.activations);
}

const std::vector<MetricDef>& defs() {
  static const std::vector<MetricDef> kDefs = {
      {{"loss", "the training loss, one value a step", false}, "", nullptr},
      {{"grad_norm", "L2 norm of a module's parameter gradients", true},
       "",
       [](const ModuleMetrics& m) { return m.grad_norm; }},
      {{"update_ratio", "||update|| / ||weight|| of a module's weight matrices", true},
       "",
       [](const ModuleMetrics& m) { return m.update_ratio; }},
      {{"activations.abs_max", "largest finite |x| among a module's forward outputs", true},
       "abs_max",
       [](const ModuleMetrics& m) {
         return activation(m, [](const ActivationSummary& a) { return a.abs_max; });
       }},
      {{"activations.zero_fraction", "fraction of a module's output values that are exactly 0", true},
       "zero_fraction",
       [](const ModuleMetrics& m) {
         return activation(m, [](const ActivationSummary& a) { return a.zero_fraction(); });
       }},
      {{"activations.nonfinite", "NaN and Inf values among a module's outputs", true},
       "nonfinite",
       [](const ModuleMetrics& m) {
         return activation(m, [](const ActivationSummary& a) { return static_cast<double>(a.nonfinite); });
       }},
      {{"activations.dead_fraction", "largest fraction of dead units (dead_units rule)", true},
       "dead_fraction",
       [](const ModuleMetrics& m) -> std::optional<double> {
         if (!m.activations || !m.activations->dead_fraction) return std::nullopt;
         return *m.activations->dead_fraction;
       }},
  };
  return kDefs;
}

const MetricDef& def_of(const std::string& metric) {
  for (const MetricDef& d : defs()) {
    if (d.info.name == metric) return d;
  }
  throw Error("no metric '" + metric + "'");  // callers pass canonical names
}

}  // namespace

std::string MetricSeries::label() const {
  if (!def_of(metric).info.per_module) return metric;
  return metric + " " + (module.empty() ? std::string("(top level)") : module);
}

const std::vector<MetricInfo>& metric_infos() {
  static const std::vector<MetricInfo> kInfos = [] {
    std::vector<MetricInfo> out;
    for (const MetricDef& d : defs()) out.push_back(d.info);
    return out;
  }();
  return kInfos;
}

std::optional<std::string> canonical_metric(std::string_view typed) {
  for (const MetricDef& d : defs()) {
    if (typed == d.info.name || (!d.alias.empty() && typed == d.alias)) return d.info.name;
  }
  return std::nullopt;
}

std::vector<std::string> metric_spellings() {
  std::vector<std::string> out;
  for (const MetricDef& d : defs()) {
    out.push_back(d.info.name);
    if (!d.alias.empty()) out.push_back(d.alias);
  }
  return out;
}

std::filesystem::path metrics_file_of(const std::string& run_dir_or_file) {
  std::error_code ec;
  std::filesystem::path path(run_dir_or_file);
  if (std::filesystem::is_directory(path, ec)) {
    std::filesystem::path file = path / "metrics.jsonl";
    if (!std::filesystem::is_regular_file(file, ec))
      throw Error(run_dir_or_file +
                  ": no metrics.jsonl in this directory: expected a run directory written "
                  "with a JsonlMetricsSink (docs/live-debugging.md), or a metrics.jsonl file");
    return file;
  }
  if (!std::filesystem::exists(path, ec))
    throw Error(run_dir_or_file + ": not found: expected a run directory or its metrics.jsonl");
  return path;
}

std::vector<MetricSeries> read_metric_series(const std::filesystem::path& file, const std::string& metric,
                                             MetricsFileRead* read) {
  const MetricDef& d = def_of(metric);
  std::map<std::string, MetricSeries> by_module;
  const MetricsFileRead r = read_metrics_jsonl(file, [&](const StepMetrics& m) {
    const auto step = static_cast<double>(m.step);
    if (d.get == nullptr) {
      if (!m.loss) return;
      MetricSeries& s = by_module[""];
      s.steps.push_back(step);
      s.values.push_back(*m.loss);
      return;
    }
    for (const ModuleMetrics& module : m.modules) {
      const std::optional<double> v = d.get(module);
      if (!v) continue;
      MetricSeries& s = by_module[module.module];
      s.steps.push_back(step);
      s.values.push_back(*v);
    }
  });
  if (read != nullptr) *read = r;
  std::vector<MetricSeries> out;
  for (auto& [module, s] : by_module) {
    s.metric = metric;
    s.module = module;
    out.push_back(std::move(s));
  }
  return out;
}

MetricsIndex index_metrics(const std::filesystem::path& file) {
  std::vector<std::set<std::string>> modules(defs().size());
  MetricsIndex index;
  index.read = read_metrics_jsonl(file, [&](const StepMetrics& m) {
    for (std::size_t i = 0; i < defs().size(); ++i) {
      const MetricDef& d = defs()[i];
      if (d.get == nullptr) {
        if (m.loss) modules[i].insert("");
        continue;
      }
      for (const ModuleMetrics& module : m.modules) {
        if (d.get(module)) modules[i].insert(module.module);
      }
    }
  });
  for (std::size_t i = 0; i < defs().size(); ++i) {
    if (modules[i].empty()) continue;
    index.metrics.emplace_back(defs()[i].info.name,
                               std::vector<std::string>(modules[i].begin(), modules[i].end()));
  }
  return index;
}

}  // namespace tfdebug::cli
