#include "tfdebug/export/inspection_report.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>

#include "tfdebug/core/error.hpp"
#include "tfdebug/core/histogram.hpp"
#include "tfdebug/export/mlflow.hpp"
#include "tfdebug/export/tensorboard.hpp"
#include "tfdebug/export/xlsx.hpp"

namespace tfdebug {

namespace {

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "[";
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (d > 0) text.push_back(',');
    text.append(std::to_string(shape[d]));
  }
  text.push_back(']');
  return text;
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

}  // namespace

void write_inspection_xlsx(const std::filesystem::path& path, const inspect::Inspection& inspection) {
  XlsxWorkbook book(path.string());
  XlsxSheet& tensors =
      book.add_sheet("Tensors", {"name", "file", "dtype", "shape", "params", "mean", "std", "min", "max",
                                 "abs max", "zero fraction", "NaN", "+Inf", "-Inf"});
  for (const inspect::TensorReport& r : inspection.tensors) {
    const Stats& s = r.stats;
    const double zero = s.count ? static_cast<double>(s.zero) / static_cast<double>(s.count) : 0.0;
    tensors.add_row({r.name, r.file, r.dtype, shape_text(r.shape), s.count, s.mean, s.std, s.min, s.max,
                     s.abs_max, zero, s.nan, s.pos_inf, s.neg_inf},
                    s.nonfinite() > 0 ? RowTone::error : RowTone::plain);
  }
  XlsxSheet& layers = book.add_sheet("Layers", {"layer", "params", "rms", "abs max"});
  for (const inspect::LayerSummary& l : inspection.layers)
    layers.add_row({std::int64_t{l.layer}, l.params, l.rms, l.abs_max});
  if (layers.rows() > 1) book.add_line_chart("Layers", 0, 2, "RMS of the weights by layer");
  XlsxSheet& found = book.add_sheet("Findings", {"severity", "rule", "tensor", "message", "suggestion"});
  for (const Finding& f : inspection.findings) {
    const RowTone tone = f.severity == Severity::error     ? RowTone::error
                         : f.severity == Severity::warning ? RowTone::warning
                                                           : RowTone::info;
    found.add_row({std::string(severity_name(f.severity)), f.rule, f.op, f.message, f.suggestion}, tone);
  }
  book.close();
}

void write_inspection_csv(const std::filesystem::path& path, const inspect::Inspection& inspection) {
  std::string text = "name,file,dtype,shape,params,mean,std,min,max,abs_max,zero,nan,pos_inf,neg_inf\n";
  const auto number = [](double v) {
    if (!std::isfinite(v)) return std::string();
    char buffer[32];
    return std::string(buffer, std::to_chars(buffer, buffer + sizeof buffer, v).ptr);  // shortest round trip
  };
  for (const inspect::TensorReport& r : inspection.tensors) {
    const Stats& s = r.stats;
    text += csv_field(r.name) + "," + csv_field(r.file) + "," + r.dtype + "," +
            csv_field(shape_text(r.shape)) + "," + std::to_string(s.count) + "," + number(s.mean) + "," +
            number(s.std) + "," + number(s.min) + "," + number(s.max) + "," + number(s.abs_max) + "," +
            std::to_string(s.zero) + "," + std::to_string(s.nan) + "," + std::to_string(s.pos_inf) + "," +
            std::to_string(s.neg_inf) + "\n";
  }
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) throw Error(path.string() + ": cannot create: " + std::strerror(errno));
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !ok) throw Error(path.string() + ": cannot write");
}

void write_inspection_tensorboard(const std::filesystem::path& dir, const inspect::Inspection& inspection) {
  TensorBoardWriter tb(dir.string());
  const std::size_t buckets = tensorflow_bucket_limits().size();
  for (const inspect::TensorReport& r : inspection.tensors) {
    const Stats& s = r.stats;
    if (r.tensorflow_histogram.size() != buckets)
      throw Error("write_inspection_tensorboard: tensor '" + r.name +
                  "' has no histogram (inspect with Options::tensorflow_histograms)");
    const auto finite = s.finite();
    tb.add_histogram(r.name, r.tensorflow_histogram, finite > 0 ? s.min : 0.0, finite > 0 ? s.max : 0.0,
                     finite, finite > 0 ? s.mean * static_cast<double>(finite) : 0.0,
                     finite > 0 ? s.l2 * s.l2 : 0.0, 0);
    if (finite > 0) {
      tb.add_scalar("std/" + r.name, s.std, 0);
      tb.add_scalar("abs_max/" + r.name, s.abs_max, 0);
    }
    tb.add_scalar("zero_fraction/" + r.name,
                  s.count ? static_cast<double>(s.zero) / static_cast<double>(s.count) : 0.0, 0);
  }
  std::string text = inspection.findings.empty() ? "no findings" : "";
  for (const Finding& f : inspection.findings)
    text += "- **" + std::string(severity_name(f.severity)) + "** `" + f.rule + "` `" + f.op +
            "`: " + f.message + "\n";
  tb.add_text("findings", text, 0);
  tb.close();
}

void write_inspection_mlflow(const std::filesystem::path& mlruns, const std::vector<std::string>& paths,
                             const inspect::Inspection& inspection, const std::string& report_json) {
  std::string name;
  for (const auto& p : paths) {
    if (!name.empty()) name.push_back(' ');
    name.append(std::filesystem::path(p).filename().string());
  }
  MlflowRun run(mlruns.string(), "tfdebug inspect", name);
  std::string joined;
  for (const auto& p : paths) {
    if (!joined.empty()) joined.append(", ");
    joined.append(p);
  }
  run.log_param("paths", joined);
  run.log_param("tensors", std::to_string(inspection.tensors.size()));
  run.log_param("parameters", std::to_string(inspection.parameters()));
  std::map<std::string, int> counts = {{"error", 0}, {"warning", 0}, {"info", 0}};
  for (const Finding& f : inspection.findings) ++counts[std::string(severity_name(f.severity))];
  for (const auto& [severity, n] : counts) run.log_metric("findings." + severity, n, 0);
  for (const inspect::LayerSummary& l : inspection.layers) {
    run.log_metric("layer_rms", l.rms, l.layer);
    run.log_metric("layer_abs_max", l.abs_max, l.layer);
  }
  std::set<std::string> rules;
  for (const Finding& f : inspection.findings) rules.insert(f.rule);
  std::string rule_list;
  for (const auto& r : rules) rule_list += (rule_list.empty() ? "" : ", ") + r;
  run.set_tag("tfdebug.rules", rule_list.empty() ? "none" : rule_list);
  run.set_tag("tfdebug.healthy", counts["error"] == 0 ? "true" : "false");
  const std::filesystem::path report_path =
      std::filesystem::path(run.run_dir()) / "artifacts" / "report.json";
  std::ofstream(report_path) << report_json << "\n";
  run.finish();
}

}  // namespace tfdebug
