// tfdebug inspect PATH...: is this checkpoint healthy? One line per tensor, a per-layer summary,
// and findings, each a named rule with severity, evidence and a suggestion (docs/inspect.md).
#include <fnmatch.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "json_output.hpp"
#include "model_names.hpp"
#include "terminal.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/histogram.hpp"
#include "tfdebug/core/stats.hpp"
#include "tfdebug/io/model_file.hpp"

namespace tfdebug::cli {
namespace {

enum class Severity { info, warning, error };
const char* severity_name(Severity s) {
  return s == Severity::error ? "error" : s == Severity::warning ? "warning" : "info";
}

struct Finding {
  std::string rule;
  Severity severity;
  std::string tensor;
  std::string message;
  std::string suggestion;
  nlohmann::json evidence = nlohmann::json::object();
};

struct InspectArgs {
  std::vector<std::string> paths;
  std::string filter;
  std::string target;
  std::string fail_on;
  int threads = 0;
  bool json = false;
};

// Thresholds of the rules; documented in docs/inspect.md.
constexpr double kOutlierRowRatio = 20.0;  // row abs-max over the median row abs-max
constexpr int kMaxListed = 16;             // rows/columns listed in evidence

std::string count_of(std::int64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::vector<std::int64_t> unravel(std::int64_t flat, std::span<const std::int64_t> shape) {
  std::vector<std::int64_t> index(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] > 0 ? flat % shape[d] : 0;
    flat = shape[d] > 0 ? flat / shape[d] : 0;
  }
  return index;
}

// First non-finite element in logical order (called only when there is one).
std::int64_t first_nonfinite(const TensorView& view) {
  std::int64_t position = 0;
  std::vector<std::int64_t> index(static_cast<std::size_t>(view.rank()), 0);
  const std::int64_t n = view.numel();
  for (; position < n; ++position) {
    if (!std::isfinite(view.at(index))) return position;
    for (int d = view.rank() - 1; d >= 0; --d) {
      if (++index[static_cast<std::size_t>(d)] < view.shape(d)) break;
      index[static_cast<std::size_t>(d)] = 0;
    }
  }
  return -1;
}

std::string index_text(const std::vector<std::int64_t>& index) {
  std::string s = "[";
  for (std::size_t i = 0; i < index.size(); ++i) s += (i ? ", " : "") + std::to_string(index[i]);
  return s + "]";
}

// 64-bit FNV-1a of the elements in logical order: finds tensors stored twice.
std::uint64_t fingerprint(const TensorView& view) {
  std::uint64_t h = 1469598103934665603ull;
  const auto size = static_cast<std::int64_t>(view.element_size());
  std::vector<std::int64_t> index(static_cast<std::size_t>(view.rank()), 0);
  const auto* base = static_cast<const unsigned char*>(view.data());
  for (std::int64_t k = 0; k < view.numel(); ++k) {
    std::int64_t offset = 0;
    for (int d = 0; d < view.rank(); ++d) offset += index[static_cast<std::size_t>(d)] * view.stride(d);
    for (std::int64_t b = 0; b < size; ++b) h = (h ^ base[offset * size + b]) * 1099511628211ull;
    for (int d = view.rank() - 1; d >= 0; --d) {
      if (++index[static_cast<std::size_t>(d)] < view.shape(d)) break;
      index[static_cast<std::size_t>(d)] = 0;
    }
  }
  return h;
}

void matrix_rules(const io::NamedTensor& t, const Stats& s, const StatsOptions& options,
                  std::vector<Finding>& findings) {
  const TensorView& v = t.view;
  if (v.rank() != 2 || !is_floating(v.dtype()) || v.numel() == 0) return;
  const std::int64_t rows = v.shape(0);
  const std::int64_t cols = v.shape(1);
  StatsOptions row_options = options;
  row_options.target.reset();
  std::vector<double> row_abs_max(static_cast<std::size_t>(rows));
  std::vector<std::int64_t> dead_rows;
  for (std::int64_t r = 0; r < rows; ++r) {
    const Stats rs = compute_stats(v.sliced(0, r, r + 1), row_options);
    row_abs_max[static_cast<std::size_t>(r)] = std::isfinite(rs.abs_max) ? rs.abs_max : 0.0;
    if (rs.zero == rs.count) dead_rows.push_back(r);
  }
  const bool embedding = t.name.find("embed") != std::string::npos || t.name.find("wte") != std::string::npos;
  if (!dead_rows.empty() && static_cast<std::int64_t>(dead_rows.size()) < rows) {
    Finding f{embedding ? "dead_embedding_rows" : "dead_output_units",
              Severity::warning,
              t.name,
              std::to_string(dead_rows.size()) + " of " + std::to_string(rows) + " rows are all zero",
              embedding
                  ? "these tokens were never trained (or were zeroed); check the vocabulary and data"
                  : "these output units can never activate; check initialisation, dropout masks or pruning",
              {}};
    f.evidence["rows"] = std::vector<std::int64_t>(
        dead_rows.begin(), dead_rows.begin() + std::min<std::size_t>(dead_rows.size(), kMaxListed));
    f.evidence["count"] = dead_rows.size();
    findings.push_back(std::move(f));
  }
  if (s.zero >= rows && !embedding) {  // a dead column needs at least `rows` zeros
    std::vector<std::int64_t> dead_cols;
    const TensorView columns = v.transposed(0, 1);
    for (std::int64_t c = 0; c < cols; ++c) {
      const Stats cs = compute_stats(columns.sliced(0, c, c + 1), row_options);
      if (cs.zero == cs.count) dead_cols.push_back(c);
    }
    if (!dead_cols.empty() && static_cast<std::int64_t>(dead_cols.size()) < cols) {
      Finding f{"dead_input_units",
                Severity::warning,
                t.name,
                std::to_string(dead_cols.size()) + " of " + std::to_string(cols) + " columns are all zero",
                "the inputs feeding these columns are ignored; check the layer before (dead ReLUs?)",
                {}};
      f.evidence["columns"] = std::vector<std::int64_t>(
          dead_cols.begin(), dead_cols.begin() + std::min<std::size_t>(dead_cols.size(), kMaxListed));
      f.evidence["count"] = dead_cols.size();
      findings.push_back(std::move(f));
    }
  }
  std::vector<double> sorted = row_abs_max;
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2),
                   sorted.end());
  const double median = sorted[sorted.size() / 2];
  if (median > 0 && rows >= 8) {
    std::vector<std::int64_t> outliers;
    double worst = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
      const double ratio = row_abs_max[static_cast<std::size_t>(r)] / median;
      if (ratio > kOutlierRowRatio) outliers.push_back(r);
      worst = std::max(worst, ratio);
    }
    if (!outliers.empty()) {
      char buffer[64];
      std::snprintf(buffer, sizeof buffer, "%.1f", worst);
      Finding f{"outlier_channels",
                Severity::warning,
                t.name,
                count_of(static_cast<std::int64_t>(outliers.size()), "row reaches", "rows reach") + " " +
                    buffer + "x the median row's abs-max",
                "outlier channels dominate the quantisation scale: consider per-channel scales or clipping",
                {}};
      f.evidence["rows"] = std::vector<std::int64_t>(
          outliers.begin(), outliers.begin() + std::min<std::size_t>(outliers.size(), kMaxListed));
      f.evidence["ratio"] = worst;
      f.evidence["median_row_abs_max"] = median;
      findings.push_back(std::move(f));
    }
  }
}

void tensor_rules(const io::NamedTensor& t, const Stats& s, const StatsOptions& options,
                  std::vector<Finding>& findings) {
  if (s.nonfinite() > 0) {
    const auto index = unravel(first_nonfinite(t.view), t.view.shape());
    Finding f{"nonfinite",
              Severity::error,
              t.name,
              std::to_string(s.nan) + " NaN, " + std::to_string(s.pos_inf) + " +Inf, " +
                  std::to_string(s.neg_inf) + " -Inf; first at " + index_text(index),
              "the checkpoint was saved after training diverged, or was corrupted: restore an earlier one",
              {}};
    f.evidence = {{"nan", s.nan}, {"pos_inf", s.pos_inf}, {"neg_inf", s.neg_inf}, {"index", index}};
    findings.push_back(std::move(f));
  }
  if (s.count > 1 && s.finite() == s.count && s.min == s.max) {
    const bool zeros = s.min == 0;
    Finding f{zeros ? "all_zero" : "constant",
              zeros ? Severity::warning : Severity::info,
              t.name,
              zeros ? "every value is zero" : "every value is " + format_number(s.min),
              zeros ? "an all-zero weight passes no signal: was it ever trained or loaded?"
                    : "fine for a fresh norm weight or bias; suspicious for a trained projection",
              {{"value", s.min}}};
    findings.push_back(std::move(f));
  }
  if (s.target && s.target->overflow > 0) {
    Finding f{"target_overflow",
              Severity::error,
              t.name,
              count_of(s.target->overflow, "value exceeds", "values exceed") + " " +
                  std::string(dtype_name(s.target->dtype)) + "'s largest finite value (abs max " +
                  format_number(s.abs_max) + ")",
              "casting to this dtype saturates or overflows these values: scale the tensor or keep it wider",
              to_json(*s.target)};
    findings.push_back(std::move(f));
  } else if (s.target && s.target->underflow_fraction > 0.01) {
    Finding f{"target_underflow",
              Severity::warning,
              t.name,
              format_number(100 * s.target->underflow_fraction) + "% of values flush to zero in " +
                  std::string(dtype_name(s.target->dtype)),
              "small values vanish in this dtype: use a per-tensor scale",
              to_json(*s.target)};
    findings.push_back(std::move(f));
  }
  matrix_rules(t, s, options, findings);
}

void run_inspect(const InspectArgs& args) {
  StatsOptions options;
  options.threads = args.threads;
  if (!args.target.empty()) options.target = parse_dtype(args.target);
  std::optional<Severity> fail_on;
  if (!args.fail_on.empty()) {
    if (args.fail_on == "error")
      fail_on = Severity::error;
    else if (args.fail_on == "warning")
      fail_on = Severity::warning;
    else if (args.fail_on == "info")
      fail_on = Severity::info;
    else
      throw Error("--fail-on must be error, warning or info, not '" + args.fail_on + "'");
  }

  std::vector<io::ModelFile> models;
  for (const std::string& path : args.paths) models.push_back(io::ModelFile::open(path));
  struct Row {
    const io::NamedTensor* tensor;
    Stats stats;
    Histogram histogram;
  };
  std::vector<Row> rows;
  std::vector<Finding> findings;
  std::size_t total = 0;
  for (const auto& m : models) total += m.tensors().size();
  const bool progress = use_colour(stderr) && total > 64 && !args.json;
  for (const auto& m : models) {
    for (const auto& t : m.tensors()) {
      if (!args.filter.empty() && fnmatch(args.filter.c_str(), t.name.c_str(), 0) != 0) continue;
      const Stats s = compute_stats(t.view, options);
      Histogram h = s.finite() > 0 ? histogram_fixed(t.view, 12, s.min, s.max) : Histogram{};
      tensor_rules(t, s, options, findings);
      rows.push_back({&t, s, std::move(h)});
      if (progress) std::fprintf(stderr, "\rinspecting %zu tensors: %zu", total, rows.size());
    }
  }
  if (progress) std::fprintf(stderr, "\r\033[K");
  // Identical tensors under different names (tied embeddings are normal, so: info).
  std::map<std::tuple<int, std::vector<std::int64_t>, std::uint64_t>, std::string> seen;
  for (const Row& r : rows) {
    const TensorView& v = r.tensor->view;
    if (v.numel() < 2) continue;
    const auto key =
        std::make_tuple(static_cast<int>(v.dtype()),
                        std::vector<std::int64_t>(v.shape().begin(), v.shape().end()), fingerprint(v));
    auto [it, inserted] = seen.emplace(key, r.tensor->name);
    if (!inserted) {
      findings.push_back(
          {"identical_tensors",
           Severity::info,
           r.tensor->name,
           "identical to '" + it->second + "'",
           "expected for tied weights; otherwise one of them was not trained or was copied by mistake",
           {{"same_as", it->second}}});
    }
  }

  if (args.json) {
    nlohmann::json out;
    out["files"] = nlohmann::json::array();
    for (const auto& m : models) {
      for (const auto& f : m.files()) out["files"].push_back({{"path", f}, {"format", m.format()}});
    }
    out["metadata"] = nlohmann::json::object();
    for (const auto& m : models) {
      for (const auto& [k, v] : m.metadata()) out["metadata"][k] = v;
    }
    out["tensors"] = nlohmann::json::array();
    for (const Row& r : rows) {
      out["tensors"].push_back({{"name", r.tensor->name},
                                {"file", r.tensor->file},
                                {"dtype", std::string(dtype_name(r.tensor->view.dtype()))},
                                {"shape", r.tensor->view.shape()},
                                {"params", r.stats.count},
                                {"stats", to_json(r.stats)}});
    }
    out["findings"] = nlohmann::json::array();
    for (const Finding& f : findings) {
      nlohmann::json j = {{"rule", f.rule},
                          {"severity", severity_name(f.severity)},
                          {"tensor", f.tensor},
                          {"message", f.message},
                          {"suggestion", f.suggestion}};
      for (const auto& [k, v] : f.evidence.items()) j[k] = v;
      out["findings"].push_back(std::move(j));
    }
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    const bool colour = use_colour(stdout);
    std::int64_t params = 0;
    for (const Row& r : rows) params += r.stats.count;
    for (const auto& m : models) {
      for (const auto& f : m.files())
        std::printf("%s  (%s)\n", paint(f, Tone::bold, colour).c_str(), m.format().c_str());
    }
    std::printf("%zu tensors, %s parameters\n\n", rows.size(), format_count(params).c_str());
    std::size_t name_width = 4;
    for (const Row& r : rows)
      name_width = std::min<std::size_t>(48, std::max(name_width, display_width(r.tensor->name)));
    std::printf("  %-*s  %-9s %-16s %12s %11s %11s %11s %7s  %s\n", static_cast<int>(name_width), "name",
                "dtype", "shape", "params", "mean", "std", "abs max", "zero", "histogram");
    for (const Row& r : rows) {
      const Stats& s = r.stats;
      std::string shape = "[";
      for (int d = 0; d < r.tensor->view.rank(); ++d)
        shape += (d ? "," : "") + std::to_string(r.tensor->view.shape(d));
      shape += "]";
      char zero[16];
      std::snprintf(zero, sizeof zero, "%.1f%%",
                    s.count ? 100.0 * static_cast<double>(s.zero) / s.count : 0.0);
      std::string name = r.tensor->name;
      if (display_width(name) > name_width) name = "…" + name.substr(name.size() - name_width + 1);
      const std::string padding(name_width - std::min(name_width, display_width(name)), ' ');
      std::string line = "  " + name + padding;
      char rest[256];
      std::snprintf(rest, sizeof rest, "  %-9s %-16s %12s %11s %11s %11s %7s  %s",
                    std::string(dtype_name(s.dtype)).c_str(), shape.c_str(), format_count(s.count).c_str(),
                    format_number(s.mean).c_str(), format_number(s.std).c_str(),
                    format_number(s.abs_max).c_str(), zero, sparkline(r.histogram.counts).c_str());
      line += rest;
      std::printf("%s\n", paint(line, s.nonfinite() > 0 ? Tone::bad : Tone::plain, colour).c_str());
    }
    // How scales evolve with depth: per numbered layer, parameters, RMS and abs-max.
    std::map<int, std::tuple<std::int64_t, double, double>> layers;  // n, sum of squares, abs max
    for (const Row& r : rows) {
      const auto layer = layer_index(r.tensor->name);
      if (!layer || r.stats.finite() == 0) continue;
      auto& [n, squares, abs_max] = layers[*layer];
      n += r.stats.finite();
      squares += r.stats.l2 * r.stats.l2;
      abs_max = std::max(abs_max, r.stats.abs_max);
    }
    if (layers.size() > 1) {
      std::printf("\n  %-6s %12s %11s %11s\n", "layer", "params", "rms", "abs max");
      for (const auto& [layer, v] : layers) {
        const auto& [n, squares, abs_max] = v;
        std::printf("  %-6d %12s %11s %11s\n", layer, format_count(n).c_str(),
                    format_number(std::sqrt(squares / static_cast<double>(n))).c_str(),
                    format_number(abs_max).c_str());
      }
    }
    std::printf("\n%zu findings\n", findings.size());
    for (const Finding& f : findings) {
      const Tone tone = f.severity == Severity::error     ? Tone::bad
                        : f.severity == Severity::warning ? Tone::warn
                                                          : Tone::dim;
      std::printf("  %s %s %s: %s\n    → %s\n", paint(severity_name(f.severity), tone, colour).c_str(),
                  f.rule.c_str(), f.tensor.c_str(), f.message.c_str(), f.suggestion.c_str());
    }
  }
  if (fail_on) {
    for (const Finding& f : findings) {
      if (f.severity >= *fail_on) {
        std::fflush(stdout);
        std::exit(1);
      }
    }
  }
}

}  // namespace

void register_inspect(CLI::App& app) {
  auto args = std::make_shared<InspectArgs>();
  CLI::App* cmd =
      app.add_subcommand("inspect", "Is this checkpoint healthy? Per-tensor statistics and findings");
  cmd->add_option("path", args->paths,
                  "safetensors files, sharded indexes (*.safetensors.index.json), .npy files, folders")
      ->required();
  cmd->add_option("--filter", args->filter, "Only tensors whose name matches this glob, e.g. '*.attn.*'");
  cmd->add_option("--target-dtype", args->target,
                  "Flag values beyond this dtype's range (f16, bf16, fp8-e4m3, ...)");
  cmd->add_option("--fail-on", args->fail_on,
                  "Exit 1 when a finding reaches this severity: error, warning, info");
  cmd->add_option("--threads", args->threads, "Worker threads per tensor (0 = one per core)")
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "Machine-readable output (schema in docs/inspect.md)");
  cmd->callback([args] { run_inspect(*args); });
}

}  // namespace tfdebug::cli
