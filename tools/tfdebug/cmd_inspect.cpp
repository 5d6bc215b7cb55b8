// tfdebug inspect PATH...: is this checkpoint healthy? One line per tensor, a per-layer summary,
// and findings, each a named rule with severity, evidence and a suggestion (docs/inspect.md).
#include <fnmatch.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "commands.hpp"
#include "json_output.hpp"
#include "model_names.hpp"
#include "tensor_scan.hpp"
#include "terminal.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/histogram.hpp"
#include "tfdebug/core/stats.hpp"
#include "tfdebug/core/tensor.hpp"
#include "tfdebug/export/mlflow.hpp"
#include "tfdebug/export/tensorboard.hpp"
#include "tfdebug/export/xlsx.hpp"
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
  std::string tensorboard;
  std::string xlsx;
  std::string csv;
  std::string mlflow;
};

// Thresholds of the rules; documented in docs/inspect.md.
constexpr double kOutlierRowRatio = 20.0;  // row abs-max over the median row abs-max
constexpr int kMaxListed = 16;             // rows/columns listed in evidence
// init_scale: std * sqrt(fan_in) of a weight matrix. Standard initialisations give 0.3-1.4
// (PyTorch's default 1/sqrt(3), LeCun 1, He sqrt(2), GPT-2's 0.02 at fan-in 768-4096 gives
// 0.55-1.3); training moves it by small factors. Beyond these bounds activations grow or
// vanish by that factor per layer.
constexpr double kInitRatioHigh = 8.0;
constexpr double kInitRatioLow = 0.02;
constexpr std::int64_t kInitMinSide = 16;  // smaller matrices are too small to judge

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

std::string index_text(const std::vector<std::int64_t>& index) {
  std::string s = "[";
  for (std::size_t i = 0; i < index.size(); ++i) s += (i ? ", " : "") + std::to_string(index[i]);
  return s + "]";
}

void matrix_rules(const io::NamedTensor& t, const TensorScan& scan, std::vector<Finding>& findings) {
  if (!scan.matrix) return;
  const Stats& s = scan.stats;
  const std::int64_t rows = t.shape()[0];
  const std::int64_t cols = t.shape()[1];
  const std::vector<double>& row_abs_max = scan.row_abs_max;
  std::vector<std::int64_t> dead_rows = scan.dead_rows;
  std::sort(dead_rows.begin(), dead_rows.end());
  const bool embedding = t.name.find("embed") != std::string::npos ||
                         t.name.find("wte") != std::string::npos ||
                         t.name.find("token_embd") != std::string::npos;
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
  const bool norm_like = t.name.find("norm") != std::string::npos || t.name.find("ln_") != std::string::npos;
  if (!embedding && !norm_like && rows >= kInitMinSide && cols >= kInitMinSide && s.finite() == s.count &&
      s.std > 0) {
    const double expected = 1.0 / std::sqrt(static_cast<double>(cols));
    const double ratio = s.std / expected;
    if (ratio > kInitRatioHigh || ratio < kInitRatioLow) {
      char buffer[160];
      std::snprintf(buffer, sizeof buffer, "std %s is %.3gx what fan-in %lld implies (1/sqrt(%lld) = %s)",
                    format_number(s.std).c_str(), ratio, static_cast<long long>(cols),
                    static_cast<long long>(cols), format_number(expected).c_str());
      Finding f{
          "init_scale",
          Severity::warning,
          t.name,
          buffer,
          ratio > kInitRatioHigh
              ? "weights this large amplify activations layer by layer: check the init gain or a missing "
                "scale"
              : "weights this small pass almost no signal: check the init, weight decay or a collapsed layer",
          {{"std", s.std}, {"fan_in", cols}, {"expected_std", expected}, {"ratio", ratio}}};
      findings.push_back(std::move(f));
    }
  }
  const std::vector<std::int64_t>& dead_cols = scan.dead_columns;
  if (s.zero >= rows && !embedding && !dead_cols.empty() &&
      static_cast<std::int64_t>(dead_cols.size()) < cols) {
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

void tensor_rules(const io::NamedTensor& t, const TensorScan& scan, std::vector<Finding>& findings) {
  const Stats& s = scan.stats;
  if (s.nonfinite() > 0) {
    const auto index = unravel(scan.first_nonfinite, t.shape());
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
  matrix_rules(t, scan, findings);
}

struct Row {
  const io::NamedTensor* tensor;
  const TensorScan* scan;
};

struct LayerSummary {
  std::int64_t params = 0;
  double sum_squares = 0;
  double abs_max = 0;
  double rms() const { return std::sqrt(sum_squares / static_cast<double>(params)); }
};

// How scales evolve with depth: per numbered layer, parameters, RMS and abs-max.
std::map<int, LayerSummary> layer_summary(const std::vector<Row>& rows) {
  std::map<int, LayerSummary> layers;
  for (const Row& r : rows) {
    const Stats& s = r.scan->stats;
    const auto layer = layer_index(r.tensor->name);
    if (!layer || s.finite() == 0) continue;
    LayerSummary& l = layers[*layer];
    l.params += s.finite();
    l.sum_squares += s.l2 * s.l2;
    l.abs_max = std::max(l.abs_max, s.abs_max);
  }
  return layers;
}

std::string shape_text(std::span<const std::int64_t> shape) {
  std::string text = "[";
  for (std::size_t d = 0; d < shape.size(); ++d) text += (d ? "," : "") + std::to_string(shape[d]);
  return text + "]";
}

// The inspection as an Excel workbook (docs/exports.md): Tensors, Layers (with a chart of RMS by
// layer) and Findings (rows coloured by severity).
void write_xlsx(const std::string& path, const std::vector<Row>& rows, const std::vector<Finding>& findings) {
  XlsxWorkbook book(path);
  XlsxSheet& tensors =
      book.add_sheet("Tensors", {"name", "file", "dtype", "shape", "params", "mean", "std", "min", "max",
                                 "abs max", "zero fraction", "NaN", "+Inf", "-Inf"});
  for (const Row& r : rows) {
    const Stats& s = r.scan->stats;
    const double zero = s.count ? static_cast<double>(s.zero) / static_cast<double>(s.count) : 0.0;
    tensors.add_row(
        {r.tensor->name, r.tensor->file, std::string(r.tensor->dtype_name()), shape_text(r.tensor->shape()),
         s.count, s.mean, s.std, s.min, s.max, s.abs_max, zero, s.nan, s.pos_inf, s.neg_inf},
        s.nonfinite() > 0 ? RowTone::error : RowTone::plain);
  }
  XlsxSheet& layers = book.add_sheet("Layers", {"layer", "params", "rms", "abs max"});
  for (const auto& [layer, l] : layer_summary(rows)) {
    layers.add_row({std::int64_t{layer}, l.params, l.rms(), l.abs_max});
  }
  if (layers.rows() > 1) book.add_line_chart("Layers", 0, 2, "RMS of the weights by layer");
  XlsxSheet& found = book.add_sheet("Findings", {"severity", "rule", "tensor", "message", "suggestion"});
  for (const Finding& f : findings) {
    const RowTone tone = f.severity == Severity::error     ? RowTone::error
                         : f.severity == Severity::warning ? RowTone::warning
                                                           : RowTone::info;
    found.add_row({std::string(severity_name(f.severity)), f.rule, f.tensor, f.message, f.suggestion}, tone);
  }
  book.close();
}

// RFC 4180 field: quoted when it holds a comma, quote or line break.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (const char c : s) {
    out += c;
    if (c == '"') out += '"';
  }
  return out + "\"";
}

// One row per tensor (docs/exports.md); numbers in shortest round-trip form, empty for NaN.
void write_csv(const std::string& path, const std::vector<Row>& rows) {
  std::string text = "name,file,dtype,shape,params,mean,std,min,max,abs_max,zero,nan,pos_inf,neg_inf\n";
  const auto number = [](double v) {
    if (!std::isfinite(v)) return std::string();
    char buffer[32];
    return std::string(buffer, std::to_chars(buffer, buffer + sizeof buffer, v).ptr);  // shortest round trip
  };
  for (const Row& r : rows) {
    const Stats& s = r.scan->stats;
    text += csv_field(r.tensor->name) + "," + csv_field(r.tensor->file) + "," +
            std::string(r.tensor->dtype_name()) + "," + csv_field(shape_text(r.tensor->shape())) + "," +
            std::to_string(s.count) + "," + number(s.mean) + "," + number(s.std) + "," + number(s.min) + "," +
            number(s.max) + "," + number(s.abs_max) + "," + std::to_string(s.zero) + "," +
            std::to_string(s.nan) + "," + std::to_string(s.pos_inf) + "," + std::to_string(s.neg_inf) + "\n";
  }
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) throw Error(path + ": cannot create: " + std::strerror(errno));
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !ok) throw Error(path + ": cannot write");
}

// The --json document (schema in docs/inspect.md).
nlohmann::json report_json(const std::vector<io::ModelFile>& models, const std::vector<Row>& rows,
                           const std::vector<Finding>& findings) {
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
                              {"dtype", std::string(r.tensor->dtype_name())},
                              {"shape", r.tensor->shape()},
                              {"params", r.scan->stats.count},
                              {"stats", to_json(r.scan->stats)}});
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
  return out;
}

// The inspection as an MLflow run (docs/exports.md) in experiment "tfdebug inspect": params
// (paths, formats, tensors, parameters), metrics (finding counts at step 0; the RMS and abs-max
// of each numbered layer with the layer as the step), the findings as tags, report.json.
void write_mlflow(const std::string& mlruns, const std::vector<std::string>& paths,
                  const std::vector<Row>& rows, const std::vector<Finding>& findings,
                  const nlohmann::json& report) {
  std::string name;
  for (const auto& p : paths)
    name += (name.empty() ? "" : " ") + std::filesystem::path(p).filename().string();
  MlflowRun run(mlruns, "tfdebug inspect", name);
  std::string joined;
  for (const auto& p : paths) joined += (joined.empty() ? "" : ", ") + p;
  run.log_param("paths", joined);
  run.log_param("tensors", std::to_string(rows.size()));
  std::int64_t params = 0;
  for (const Row& r : rows) params += r.scan->stats.count;
  run.log_param("parameters", std::to_string(params));
  std::map<std::string, int> counts = {{"error", 0}, {"warning", 0}, {"info", 0}};
  for (const Finding& f : findings) ++counts[severity_name(f.severity)];
  for (const auto& [severity, n] : counts) run.log_metric("findings." + severity, n, 0);
  for (const auto& [layer, l] : layer_summary(rows)) {
    run.log_metric("layer_rms", l.rms(), layer);
    run.log_metric("layer_abs_max", l.abs_max, layer);
  }
  std::set<std::string> rules;
  for (const Finding& f : findings) rules.insert(f.rule);
  std::string rule_list;
  for (const auto& r : rules) rule_list += (rule_list.empty() ? "" : ", ") + r;
  run.set_tag("tfdebug.rules", rule_list.empty() ? "none" : rule_list);
  run.set_tag("tfdebug.healthy", counts["error"] == 0 ? "true" : "false");
  const std::filesystem::path report_path =
      std::filesystem::path(run.run_dir()) / "artifacts" / "report.json";
  std::ofstream(report_path) << report.dump(2) << "\n";
  run.finish();
}

// A checkpoint in TensorBoard (docs/exports.md): per tensor, a histogram of its values and
// scalars (std, abs max, zero fraction) at step 0, and the findings as Markdown text. Reads each
// tensor again (TensorFlow's buckets need every value); quantised tensors one decoded tensor at
// a time.
void write_tensorboard(const std::string& dir,
                       const std::vector<std::pair<const io::NamedTensor*, const Stats*>>& rows,
                       const std::vector<Finding>& findings) {
  TensorBoardWriter tb(dir);
  for (const auto& [t, s] : rows) {
    if (t->quantized) {
      Tensor decoded(DType::f32, t->quantized->shape);
      dequantize(t->quantized->format, t->quantized->data, t->quantized->blocks(),
                 static_cast<float*>(decoded.data()));
      tb.add_histogram(t->name, decoded.view(), 0);
    } else {
      tb.add_histogram(t->name, t->view, 0);
    }
    if (s->finite() > 0) {
      tb.add_scalar("std/" + t->name, s->std, 0);
      tb.add_scalar("abs_max/" + t->name, s->abs_max, 0);
    }
    tb.add_scalar("zero_fraction/" + t->name,
                  s->count ? static_cast<double>(s->zero) / static_cast<double>(s->count) : 0.0, 0);
  }
  std::string text = findings.empty() ? "no findings" : "";
  for (const Finding& f : findings) {
    text += "- **" + std::string(severity_name(f.severity)) + "** `" + f.rule + "` `" + f.tensor +
            "`: " + f.message + "\n";
  }
  tb.add_text("findings", text, 0);
  tb.close();
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
  std::vector<const io::NamedTensor*> selected;
  for (const auto& m : models) {
    for (const auto& t : m.tensors()) {
      if (args.filter.empty() || fnmatch(args.filter.c_str(), t.name.c_str(), 0) == 0) selected.push_back(&t);
    }
  }
  // A progress bar on a terminal, for inputs that take more than a moment.
  std::function<void(std::int64_t, std::int64_t)> progress;
  if (use_colour(stderr) && !args.json) {
    progress = [](std::int64_t done, std::int64_t total) {
      if (total < (std::int64_t{256} << 20)) return;
      std::fprintf(stderr, "\rinspecting %s", progress_bar(done, total).c_str());
    };
  }
  const auto release = [&models](const void* data, std::size_t bytes) {
    for (const auto& m : models) m.drop_pages(data, bytes);
  };
  const std::vector<TensorScan> scans = scan_tensors(selected, options, args.threads, progress, release);
  if (progress) std::fprintf(stderr, "\r\033[K");
  std::vector<Row> rows;
  std::vector<Finding> findings;
  for (std::size_t i = 0; i < selected.size(); ++i) {
    tensor_rules(*selected[i], scans[i], findings);
    rows.push_back({selected[i], &scans[i]});
  }
  // Identical tensors under different names (tied embeddings are normal, so: info). Equal
  // statistics make candidates; their bytes decide.
  std::map<std::tuple<std::string, std::vector<std::int64_t>, std::int64_t, std::int64_t, double, double,
                      double, double>,
           std::vector<const io::NamedTensor*>>
      seen;
  for (const Row& r : rows) {
    const io::NamedTensor& t = *r.tensor;
    const Stats& s = r.scan->stats;
    if (t.numel() < 2 || s.finite() == 0) continue;
    auto& group = seen[std::make_tuple(std::string(t.dtype_name()),
                                       std::vector<std::int64_t>(t.shape().begin(), t.shape().end()), s.zero,
                                       s.negative, s.min, s.max, s.mean, s.l2)];
    const auto same = std::find_if(group.begin(), group.end(),
                                   [&](const io::NamedTensor* other) { return same_values(*other, t); });
    if (same == group.end()) {
      group.push_back(&t);
      continue;
    }
    findings.push_back(
        {"identical_tensors",
         Severity::info,
         t.name,
         "identical to '" + (*same)->name + "'",
         "expected for tied weights; otherwise one of them was not trained or was copied by mistake",
         {{"same_as", (*same)->name}}});
  }

  const nlohmann::json report = report_json(models, rows, findings);
  if (args.json) {
    std::printf("%s\n", report.dump(2).c_str());
  } else {
    const bool colour = use_colour(stdout);
    std::int64_t params = 0;
    for (const Row& r : rows) params += r.scan->stats.count;
    for (const auto& m : models) {
      for (const auto& f : m.files())
        std::printf("%s  (%s)\n", paint(f, Tone::bold, colour).c_str(), m.format().c_str());
    }
    std::printf("%zu tensors, %s parameters\n", rows.size(), format_count(params).c_str());
    for (const auto& m : models) {
      if (const auto it = m.metadata().find("tfdebug.undecoded"); it != m.metadata().end()) {
        std::printf("%s\n", paint("not decoded: " + it->second, Tone::warn, colour).c_str());
      }
    }
    std::printf("\n");
    std::size_t name_width = 4;
    for (const Row& r : rows)
      name_width = std::min<std::size_t>(48, std::max(name_width, display_width(r.tensor->name)));
    std::printf("  %-*s  %-9s %-16s %12s %11s %11s %11s %7s  %s\n", static_cast<int>(name_width), "name",
                "dtype", "shape", "params", "mean", "std", "abs max", "zero", "histogram");
    for (const Row& r : rows) {
      const Stats& s = r.scan->stats;
      const std::string shape = shape_text(r.tensor->shape());
      char zero[16];
      std::snprintf(zero, sizeof zero, "%.1f%%",
                    s.count ? 100.0 * static_cast<double>(s.zero) / s.count : 0.0);
      std::string name = r.tensor->name;
      if (display_width(name) > name_width) name = "…" + name.substr(name.size() - name_width + 1);
      const std::string padding(name_width - std::min(name_width, display_width(name)), ' ');
      std::string line = "  " + name + padding;
      char rest[256];
      std::snprintf(rest, sizeof rest, "  %-9s %-16s %12s %11s %11s %11s %7s  %s",
                    std::string(r.tensor->dtype_name()).c_str(), shape.c_str(), format_count(s.count).c_str(),
                    format_number(s.mean).c_str(), format_number(s.std).c_str(),
                    format_number(s.abs_max).c_str(), zero, sparkline(r.scan->histogram.counts).c_str());
      line += rest;
      std::printf("%s\n", paint(line, s.nonfinite() > 0 ? Tone::bad : Tone::plain, colour).c_str());
    }
    const auto layers = layer_summary(rows);
    if (layers.size() > 1) {
      std::printf("\n  %-6s %12s %11s %11s\n", "layer", "params", "rms", "abs max");
      for (const auto& [layer, l] : layers) {
        std::printf("  %-6d %12s %11s %11s\n", layer, format_count(l.params).c_str(),
                    format_number(l.rms()).c_str(), format_number(l.abs_max).c_str());
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
  if (!args.xlsx.empty()) write_xlsx(args.xlsx, rows, findings);
  if (!args.csv.empty()) write_csv(args.csv, rows);
  if (!args.mlflow.empty()) write_mlflow(args.mlflow, args.paths, rows, findings, report);
  if (!args.tensorboard.empty()) {
    std::vector<std::pair<const io::NamedTensor*, const Stats*>> tensors;
    tensors.reserve(rows.size());
    for (const Row& r : rows) tensors.emplace_back(r.tensor, &r.scan->stats);
    write_tensorboard(args.tensorboard, tensors, findings);
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
                  "Model files or folders: safetensors (or a *.safetensors.index.json), GGUF, PyTorch "
                  ".pt/.bin, ONNX, .npy, .npz")
      ->required();
  cmd->add_option("--filter", args->filter, "Only tensors whose name matches this glob, e.g. '*.attn.*'");
  cmd->add_option("--target-dtype", args->target,
                  "Flag values beyond this dtype's range (f16, bf16, fp8-e4m3, ...)");
  cmd->add_option("--fail-on", args->fail_on,
                  "Exit 1 when a finding reaches this severity: error, warning, info");
  cmd->add_option("--threads", args->threads, "Worker threads (0 = one per core)")->capture_default_str();
  cmd->add_flag("--json", args->json, "Machine-readable output (schema in docs/inspect.md)");
  cmd->add_option("--mlflow", args->mlflow,
                  "Also log the inspection as an MLflow run in this file store (e.g. ./mlruns)");
  cmd->add_option("--csv", args->csv, "Also write the per-tensor table as CSV (columns in docs/exports.md)");
  cmd->add_option("--xlsx", args->xlsx,
                  "Also write an Excel workbook: Tensors, Layers (with a chart) and Findings sheets");
  cmd->add_option(
      "--tensorboard", args->tensorboard,
      "Also write a TensorBoard run to this folder: a histogram and scalars per tensor, findings as text");
  cmd->callback([args] { run_inspect(*args); });
}

}  // namespace tfdebug::cli
