// A run's metrics as named series, by the names `tfdebug plot --metric` takes: one function that
// turns metrics.jsonl into series, shared by the terminal plot, its --json and its -o picture.
//
//   auto file = metrics_file_of("runs/exp1");                 // runs/exp1/metrics.jsonl
//   auto series = read_metric_series(file, "grad_norm");       // one per module, by path
//   series[0].module, series[0].steps, series[0].values        // NaN where the run had NaN/Inf
//
// Metric names are the keys of metrics.jsonl (docs/exports.md): loss; per module grad_norm and
// update_ratio; and activations.abs_max, activations.zero_fraction, activations.nonfinite,
// activations.dead_fraction, also without "activations.".
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tfdebug/export/metrics_files.hpp"

namespace tfdebug::cli {

struct MetricSeries {
  std::string metric;  // canonical name: "loss", "grad_norm", "activations.abs_max", ...
  std::string module;  // "" for loss and for the top level
  std::vector<double> steps;
  std::vector<double> values;  // NaN where the file says the value was not finite

  // "loss", "grad_norm blocks.0.attn.q", "activations.abs_max (top level)".
  std::string label() const;
};

struct MetricInfo {
  std::string name;
  std::string what;  // one line for --list
  bool per_module = true;
};
// Every metric, in the order --list shows them.
const std::vector<MetricInfo>& metric_infos();
// The canonical name of what a user typed ("abs_max" -> "activations.abs_max"); nullopt when it
// names none. Every name and alias, for did-you-mean.
std::optional<std::string> canonical_metric(std::string_view typed);
std::vector<std::string> metric_spellings();

// A run directory (its metrics.jsonl) or a metrics.jsonl file; tfdebug::Error naming the path
// when there is neither.
std::filesystem::path metrics_file_of(const std::string& run_dir_or_file);

// Every series of `metric` (canonical) in the file, one per module that has a value at some step,
// sorted by module path. Steps without the value are left out of a series; a NaN value is kept.
std::vector<MetricSeries> read_metric_series(const std::filesystem::path& file, const std::string& metric,
                                             MetricsFileRead* read = nullptr);

// What the file holds: for each metric, the modules with a value (loss: one, "").
struct MetricsIndex {
  MetricsFileRead read;
  std::vector<std::pair<std::string, std::vector<std::string>>> metrics;  // metric_infos() order
};
MetricsIndex index_metrics(const std::filesystem::path& file);

}  // namespace tfdebug::cli
