// tfdebug inspect PATH...: is this checkpoint healthy? One line per tensor, a per-layer summary,
// and findings, each a named rule with severity, evidence and a suggestion (docs/inspect.md).
// The inspection itself is tfdebug::inspect's; the files for other tools are tfdebug::export's.
#include <fnmatch.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "findings_text.hpp"
#include "json_output.hpp"
#include "safe_text.hpp"
#include "terminal.hpp"
#include "terminal_size.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/export/html_report.hpp"
#include "tfdebug/export/inspection_plots.hpp"
#include "tfdebug/export/inspection_report.hpp"
#include "tfdebug/inspect/inspection.hpp"
#include "tfdebug/io/model_file.hpp"
#include "tfdebug/viz/terminal_plot.hpp"

namespace tfdebug::cli {
namespace {

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
  std::string html;
  std::size_t html_rows = HtmlReportOptions{}.max_tensor_rows;
  std::string plots;
  std::string plot_format = "png";
  std::string histogram;  // a glob: the tensors whose histograms are printed
  int bins = 24;
};

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "[";
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (d > 0) text += ',';  // appended, not `"," + ...`: GCC 12 warns falsely (-Wrestrict) on that
    text += std::to_string(shape[d]);
  }
  return text + "]";
}

std::string joined(const std::vector<std::string>& paths) {
  std::string out;
  for (const auto& p : paths) out += (out.empty() ? "" : ", ") + p;
  return out;
}

nlohmann::json tensor_json(const inspect::TensorReport& r) {
  return {{"name", r.name},   {"file", r.file},          {"dtype", r.dtype},
          {"shape", r.shape}, {"params", r.stats.count}, {"stats", to_json(r.stats)}};
}

// The --json document (schema in docs/inspect.md) without its tensors: a finding's evidence is
// merged into it.
nlohmann::json report_json_head(const inspect::Inspection& inspection) {
  nlohmann::json out;
  out["files"] = nlohmann::json::array();
  for (const auto& f : inspection.files) out["files"].push_back({{"path", f.path}, {"format", f.format}});
  out["metadata"] = nlohmann::json::object();
  for (const auto& [k, v] : inspection.metadata) out["metadata"][k] = v;
  out["findings"] = nlohmann::json::array();
  for (const Finding& f : inspection.findings) {
    nlohmann::json j = {{"rule", f.rule},
                        {"severity", std::string(severity_name(f.severity))},
                        {"tensor", f.op},
                        {"message", f.message},
                        {"suggestion", f.suggestion}};
    for (const Evidence& e : f.evidence) j[e.key] = to_json(e.value);
    out["findings"].push_back(std::move(j));
  }
  return out;
}

nlohmann::json report_json(const inspect::Inspection& inspection) {
  nlohmann::json out = report_json_head(inspection);
  out["tensors"] = nlohmann::json::array();
  for (const inspect::TensorReport& r : inspection.tensors) out["tensors"].push_back(tensor_json(r));
  return out;
}

// `text` (a value dumped with indent 2) as it sits `by` spaces deeper.
std::string indented(const std::string& text, std::size_t by) {
  const std::string pad(by, ' ');
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (const char c : text) {
    out += c;
    if (c == '\n') out += pad;
  }
  return out;
}

// report_json(inspection) as json_text writes it, one tensor at a time: the document of a
// checkpoint with 200,000 tensors would take a gigabyte as one value.
void print_report_json(const inspect::Inspection& inspection, const nlohmann::json& histograms) {
  nlohmann::json head = report_json_head(inspection);
  if (!histograms.is_null()) head["histograms"] = histograms;
  std::string text = "{\n";
  for (const char* key : {"files", "findings", "histograms", "metadata"}) {  // json_text's order: sorted
    if (!head.contains(key)) continue;
    text += std::string("  \"") + key + "\": " + indented(json_text(head[key]), 2) + ",\n";
  }
  text += "  \"tensors\": ";
  std::fputs(text.c_str(), stdout);
  if (inspection.tensors.empty()) {
    std::fputs("[]", stdout);
  } else {
    std::fputs("[\n", stdout);
    for (std::size_t i = 0; i < inspection.tensors.size(); ++i) {
      const std::string tensor = "    " + indented(json_text(tensor_json(inspection.tensors[i])), 4);
      std::fputs(tensor.c_str(), stdout);
      std::fputs(i + 1 < inspection.tensors.size() ? ",\n" : "\n", stdout);
    }
    std::fputs("  ]", stdout);
  }
  std::fputs("\n}\n", stdout);
}

// The keys of `metadata` in the order they are shown: a GGUF file's architecture first, then
// its hyper-parameters (the keys under the architecture's name), then the rest as sorted.
std::vector<std::string> metadata_order(const std::map<std::string, std::string>& metadata) {
  std::vector<std::string> first;
  std::vector<std::string> rest;
  std::string architecture;
  if (const auto it = metadata.find("general.architecture"); it != metadata.end()) {
    architecture = it->second + ".";
    first.push_back(it->first);
  }
  for (const auto& [key, value] : metadata) {
    if (key == "general.architecture" || key.starts_with("tfdebug.")) continue;
    (!architecture.empty() && key.starts_with(architecture) ? first : rest).push_back(key);
  }
  first.insert(first.end(), rest.begin(), rest.end());
  return first;
}

// Note [Metadata in text]: what the files say besides their tensors (safetensors __metadata__,
// GGUF keys, a PyTorch checkpoint's plain entries such as epoch or lr, ONNX's producer), not only
// in --json. At most kShown keys, each value at most kValueColumns wide; --json has them all.
void print_metadata(const inspect::Inspection& inspection, bool colour) {
  constexpr std::size_t kShown = 40;
  constexpr std::size_t kValueColumns = 120;
  const std::vector<std::string> keys = metadata_order(inspection.metadata);
  const auto skipped = inspection.metadata.find("tfdebug.skipped_objects");
  if (keys.empty() && skipped == inspection.metadata.end()) return;
  // A PyTorch checkpoint's "metadata" is what it pickled beside its tensors: say so.
  const bool pytorch = std::all_of(inspection.files.begin(), inspection.files.end(),
                                   [](const inspect::ModelFileInfo& f) { return f.format == "pytorch"; });
  const auto count = static_cast<std::int64_t>(keys.size());
  const std::string title = pytorch ? "entries that are not tensors (" + plural(count, "value") + ")"
                                    : "metadata (" + plural(count, "key") + ")";
  std::printf("\n%s\n", paint(title, Tone::bold, colour).c_str());
  KeyValueTable table;
  for (std::size_t i = 0; i < keys.size() && i < kShown; ++i) {
    table.add(terminal_safe(keys[i]),
              elide_middle(terminal_safe(inspection.metadata.at(keys[i])), kValueColumns));
  }
  if (keys.size() > kShown) {
    table.add("...",
              plural(static_cast<std::int64_t>(keys.size() - kShown), "more key") + " (--json lists them)");
  }
  if (skipped != inspection.metadata.end()) {
    table.add("objects not read", elide_middle(terminal_safe(skipped->second), kValueColumns) +
                                      " (pickled objects that are not tensors; tfdebug never calls them)");
  }
  table.print(stdout);
}

void print_inspection_text(const inspect::Inspection& inspection) {
  const bool colour = use_colour(stdout);
  const std::size_t columns = terminal_columns(stdout);
  for (const auto& f : inspection.files)
    std::printf("%s  (%s)\n", paint(terminal_safe(f.path), Tone::bold, colour).c_str(), f.format.c_str());
  std::printf("%s, %s\n", plural(static_cast<std::int64_t>(inspection.tensors.size()), "tensor").c_str(),
              plural(inspection.parameters(), "parameter").c_str());
  if (const auto it = inspection.metadata.find("tfdebug.undecoded"); it != inspection.metadata.end())
    std::printf("%s\n", paint("not decoded: " + terminal_safe(it->second), Tone::warn, colour).c_str());
  print_metadata(inspection, colour);
  std::printf("\n");
  using Align = Table::Align;
  // Names as the terminal shows them (Note [Terminal-safe text]), elided in the middle to fit.
  Table tensors({{.header = "name", .elidable = true, .minimum = 24},
                 {.header = "dtype"},
                 {.header = "shape"},
                 {.header = "params", .align = Align::right},
                 {.header = "abs max", .align = Align::right},
                 {.header = "mean", .align = Align::right, .droppable = true},
                 {.header = "std", .align = Align::right, .droppable = true},
                 {.header = "zero", .align = Align::right, .droppable = true},
                 {.header = "histogram", .droppable = true}});
  for (const inspect::TensorReport& r : inspection.tensors) {
    const Stats& s = r.stats;
    char zero[16];
    std::snprintf(zero, sizeof zero, "%.1f%%", s.count ? 100.0 * static_cast<double>(s.zero) / s.count : 0.0);
    tensors.add({terminal_safe(r.name), terminal_safe(r.dtype), shape_text(r.shape), format_count(s.count),
                 format_number(s.abs_max), format_number(s.mean), format_number(s.std), zero,
                 sparkline(r.sparkline.counts)},
                s.nonfinite() > 0 ? Tone::bad : Tone::plain);
  }
  tensors.print(stdout, columns, colour);
  if (inspection.layers.size() > 1) {
    std::printf("\n");
    Table layers({{.header = "layer", .align = Align::right},
                  {.header = "params", .align = Align::right},
                  {.header = "rms", .align = Align::right},
                  {.header = "abs max", .align = Align::right}});
    for (const inspect::LayerSummary& l : inspection.layers) {
      layers.add(
          {std::to_string(l.layer), format_count(l.params), format_number(l.rms), format_number(l.abs_max)});
    }
    layers.print(stdout, columns, colour);
  }
  const SeverityCounts counts = count_severities(inspection.findings);
  std::printf("\n%s\n", findings_headline(counts).c_str());
  for (const Finding* f : by_severity(inspection.findings)) {
    print_finding_line(stdout, f->severity,
                       f->rule + " " + terminal_safe(f->op) + ": " + terminal_safe(f->message), colour,
                       f->suggestion.empty() ? std::string() : "→ " + terminal_safe(f->suggestion));
  }
}

// --histogram GLOB: the histogram of each tensor whose name matches, from every value of the
// tensor (the files are read again; the table's sparkline is from a sample). At most
// kMaxHistograms tensors, in file order.
constexpr std::size_t kMaxHistograms = 16;
struct TensorHistograms {
  std::vector<std::pair<const inspect::TensorReport*, std::optional<Histogram>>>
      shown;  // none: no finite value
  std::size_t matched = 0;
};

TensorHistograms tensor_histograms(const InspectArgs& args, const inspect::Inspection& inspection) {
  TensorHistograms out;
  for (const inspect::TensorReport& r : inspection.tensors) {
    if (::fnmatch(args.histogram.c_str(), r.name.c_str(), 0) != 0) continue;
    if (++out.matched <= kMaxHistograms) out.shown.emplace_back(&r, std::nullopt);
  }
  if (out.matched == 0) {
    throw Error("--histogram '" + args.histogram + "' matches none of the " +
                std::to_string(inspection.tensors.size()) +
                " tensor names (a glob: * any text, ? one character, [..] a set)");
  }
  std::vector<io::ModelFile> files;
  std::map<std::string, const io::NamedTensor*> by_name;
  for (const std::string& path : args.paths) {
    files.push_back(io::ModelFile::open(path));
    for (const io::NamedTensor& t : files.back().tensors()) by_name.emplace(t.name, &t);
  }
  for (auto& [report, histogram] : out.shown) {
    const auto found = by_name.find(report->name);
    if (found != by_name.end() && report->stats.finite() > 0)
      histogram = value_histogram(*found->second, report->stats, args.bins);
  }
  return out;
}

nlohmann::json histograms_json(const TensorHistograms& histograms) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [report, histogram] : histograms.shown) {
    out.push_back(
        {{"name", report->name}, {"histogram", histogram ? to_json(*histogram) : nlohmann::json(nullptr)}});
  }
  return out;
}

void print_histograms(const InspectArgs& args, const TensorHistograms& histograms) {
  const bool colour = use_colour(stdout);
  viz::TerminalOptions bars;
  bars.width = std::max(20, terminal_size(stdout).columns - 2);  // indented by two
  bars.height = args.bins;
  bars.glyphs = viz::terminal_glyphs_from_environment();
  bars.colour = colour;
  for (const auto& [report, histogram] : histograms.shown) {
    const std::string title =
        terminal_safe(report->name) + "  " + terminal_safe(report->dtype) + " " + shape_text(report->shape);
    std::printf("\n%s\n", paint(title, Tone::bold, colour).c_str());
    if (!histogram) {
      std::printf("  %s\n", report->stats.count == 0 ? "no values" : "no finite value");
      continue;
    }
    const Histogram& h = *histogram;
    for (const std::string& line : viz::render_terminal_histogram(h.edges, h.counts, bars))
      std::printf("  %s\n", line.c_str());
    std::string apart;
    const auto part = [&](std::int64_t n, const char* what) {
      if (n == 0) return;
      apart.append(apart.empty() ? "" : ", ").append(format_count(n)).append(" ").append(what);
    };
    part(h.nan, "NaN");
    part(h.pos_inf, "+inf");
    part(h.neg_inf, "-inf");
    if (!apart.empty()) std::printf("  %s\n", paint("not binned: " + apart, Tone::bad, colour).c_str());
  }
  if (histograms.matched > histograms.shown.size()) {
    std::string more =
        plural(static_cast<std::int64_t>(histograms.matched - histograms.shown.size()), "more tensor");
    more.append(" matched --histogram '").append(terminal_safe(args.histogram));
    more.append("' (the first ").append(std::to_string(kMaxHistograms)).append(" are shown)");
    std::printf("\n%s\n", paint(more, Tone::dim, colour).c_str());
  }
}

int run_inspect(const InspectArgs& args) {
  constexpr int kMaxThreads = 1024;  // more only cost: the work is split over the cores there are
  if (args.threads < 0 || args.threads > kMaxThreads) {
    throw Error("--threads must be between 0 (one per core) and " + std::to_string(kMaxThreads) + ", got " +
                std::to_string(args.threads));
  }
  inspect::Options options;
  options.threads = args.threads;
  options.filter = args.filter;
  if (!args.target.empty()) options.stats.target = parse_dtype(args.target);
  options.tensorflow_histograms = !args.tensorboard.empty();
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
  // A progress bar on a terminal, for inputs that take more than a moment.
  const bool progress = interactive(stderr) && !args.json;
  auto drawn = std::make_shared<bool>(false);  // erased after, only when drawn
  if (progress) {
    options.progress = [drawn](std::int64_t done, std::int64_t total) {
      if (total < (std::int64_t{256} << 20)) return;
      std::fprintf(stderr, "\rinspecting %s", progress_bar(done, total).c_str());
      *drawn = true;
    };
  }
  const std::vector<std::filesystem::path> paths(args.paths.begin(), args.paths.end());
  const inspect::Inspection inspection = inspect::inspect(paths, options);
  if (*drawn) std::fprintf(stderr, "\r\033[K");
  if (!args.filter.empty() && inspection.tensors.empty()) {
    throw Error("--filter '" + args.filter + "' matches none of the " +
                std::to_string(inspection.tensors_in_files) + " tensor names in " + joined(args.paths) +
                " (a glob: * any text, ? one character, [..] a set)");
  }

  // Built only for the outputs that hold it: for 200,000 tensors it is most of inspect's time.
  const nlohmann::json report = !args.mlflow.empty() ? report_json(inspection) : nlohmann::json();
  TensorHistograms histograms;
  if (!args.histogram.empty()) histograms = tensor_histograms(args, inspection);
  if (args.json) {
    print_report_json(inspection, args.histogram.empty() ? nlohmann::json() : histograms_json(histograms));
  } else {
    print_inspection_text(inspection);
    if (!args.histogram.empty()) print_histograms(args, histograms);
  }
  if (!args.xlsx.empty()) write_inspection_xlsx(args.xlsx, inspection);
  if (!args.csv.empty()) write_inspection_csv(args.csv, inspection);
  if (!args.mlflow.empty()) write_inspection_mlflow(args.mlflow, args.paths, inspection, json_text(report));
  if (!args.tensorboard.empty()) write_inspection_tensorboard(args.tensorboard, inspection);
  if (!args.html.empty()) {
    HtmlReportOptions page_options;
    page_options.max_tensor_rows = args.html_rows;
    page_options.title = joined(args.paths);
    const HtmlReportWritten page = write_inspection_html(inspection, args.html, page_options);
    // On stderr when stdout carries JSON, so that --json stays one document.
    std::fprintf(args.json ? stderr : stdout, "wrote %s (%s KB; %s of %s tensors in its table)\n",
                 terminal_safe(args.html).c_str(), format_count(std::int64_t(page.bytes / 1024)).c_str(),
                 format_count(std::int64_t(page.tensor_rows)).c_str(),
                 format_count(std::int64_t(inspection.tensors.size())).c_str());
  }
  if (!args.plots.empty()) {
    const std::vector<std::filesystem::path> model_paths(args.paths.begin(), args.paths.end());
    InspectionPlotOptions plot_options;
    plot_options.format = args.plot_format;
    const InspectionPlots plots = write_inspection_plots(model_paths, inspection, args.plots, plot_options);
    // On stderr with --json, whose stdout is one JSON document.
    std::FILE* out = args.json ? stderr : stdout;
    const auto n = [](std::size_t count, const char* noun) { return plural(std::int64_t(count), noun); };
    std::fprintf(out, "\nplots: %s in %s (histograms of %s", n(plots.files.size(), "picture").c_str(),
                 terminal_safe(args.plots).c_str(), n(plots.tensors_drawn, "tensor").c_str());
    if (plots.layers > 0) std::fprintf(out, "; %zu of %zu layers", plots.layers_drawn, plots.layers);
    std::fprintf(out, ")\n");
  }
  return fail_on && inspection.any_at_least(*fail_on) ? 1 : 0;
}

}  // namespace

void register_inspect(CLI::App& app, int& exit_code) {
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
  cmd->add_option("--html", args->html,
                  "Also write one self-contained HTML page: findings, the module tree, per-layer charts, the "
                  "tensor table (docs/html-report.md)");
  cmd->add_option("--html-rows", args->html_rows,
                  "Tensor rows the HTML page embeds (findings first, then the largest; the tree covers all)")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t(1), std::size_t(1000000)));
  cmd->add_option(
      "--plots", args->plots,
      "Also draw the weights into this folder: a histogram of every tensor per layer (layer_NNN.png), "
      "their scale by depth (depth.png), the rest (other.png)");
  cmd->add_option("--plot-format", args->plot_format, "Pictures of --plots as png, svg or pdf")
      ->check(CLI::IsMember({"png", "svg", "pdf"}))
      ->capture_default_str();
  cmd->add_option("--histogram", args->histogram,
                  "Also print the histogram of each tensor whose name matches this glob (at most 16), "
                  "as bars at the terminal's width")
      ->type_name("GLOB");
  cmd->add_option("--bins", args->bins, "Bins of --histogram")
      ->capture_default_str()
      ->check(CLI::Range(2, 200));
  cmd->callback([args, &exit_code] { exit_code = run_inspect(*args); });
}

}  // namespace tfdebug::cli
