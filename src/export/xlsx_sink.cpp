#include "tfdebug/export/xlsx_sink.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>

#include "step_scalars.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/export/xlsx.hpp"

namespace tfdebug {

namespace {

RowTone tone(Severity severity) {
  switch (severity) {
    case Severity::error:
      return RowTone::error;
    case Severity::warning:
      return RowTone::warning;
    case Severity::info:
      return RowTone::info;
  }
  return RowTone::plain;
}

XlsxCell optional_number(const std::optional<double>& value) {
  return value ? XlsxCell(*value) : XlsxCell();
}

// A wide sheet: step, then one column per module, and a line chart of the `chart_modules`
// modules with the largest values (non-finite ones first), in column order.
void wide_sheet(XlsxWorkbook& book, const std::string& name, const std::string& title,
                const std::string& y_title, const std::vector<std::string>& modules,
                const std::vector<std::vector<std::pair<int, double>>>& rows,
                const std::vector<std::int64_t>& steps, int chart_modules) {
  std::vector<std::string> header = {"step"};
  for (const std::string& m : modules) header.push_back(m);
  XlsxSheet& sheet = book.add_sheet(name, header);
  bool any = false;
  std::vector<double> largest(modules.size(), -std::numeric_limits<double>::infinity());
  std::vector<bool> seen(modules.size(), false);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    if (rows[r].empty()) continue;  // a step without these values (e.g. no backward)
    std::vector<XlsxCell> cells(header.size());
    cells[0] = steps[r];
    for (const auto& [column, value] : rows[r]) {
      cells[std::size_t(column) + 1] = value;
      const double rank = std::isfinite(value) ? value : std::numeric_limits<double>::infinity();
      largest[std::size_t(column)] = std::max(largest[std::size_t(column)], rank);
      seen[std::size_t(column)] = true;
    }
    sheet.add_row(std::move(cells));
    any = true;
  }
  if (!any || modules.empty()) return;
  std::vector<int> order;
  for (int c = 0; c < int(modules.size()); ++c) {
    if (seen[std::size_t(c)]) order.push_back(c);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return largest[std::size_t(a)] > largest[std::size_t(b)]; });
  const std::size_t shown =
      std::min(order.size(), std::size_t(std::clamp(chart_modules, 1, 255)));  // Excel: 255 series at most
  order.resize(shown);
  std::sort(order.begin(), order.end());
  std::vector<int> ys(order.size());
  std::transform(order.begin(), order.end(), ys.begin(), [](int c) { return c + 1; });  // past "step"
  const std::string chart_title = shown < modules.size()
                                      ? title + ": the " + std::to_string(shown) + " largest of " +
                                            std::to_string(modules.size()) + " modules (all in the table)"
                                      : title;
  book.add_line_chart(name, 0, std::move(ys), chart_title, y_title);
}
}  // namespace

XlsxSink::XlsxSink(std::string path, const RunConfig& config, XlsxSinkOptions options)
    : XlsxSink(std::move(path), config.entries(), options) {}

XlsxSink::XlsxSink(std::string path, std::vector<std::pair<std::string, std::string>> config_entries,
                   XlsxSinkOptions options)
    : path_(std::move(path)), config_(std::move(config_entries)), options_(options) {
  if (options_.every < 1) options_.every = 1;
  // The workbook is written at the end of the run: find out now, not after hours of training,
  // that it cannot be.
  const std::filesystem::path file(path_);
  std::error_code ec;
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path(), ec);
  const bool existed = std::filesystem::exists(file, ec);
  std::FILE* probe = std::fopen(path_.c_str(), "ab");
  if (probe == nullptr) throw Error(path_ + ": cannot create the workbook: " + std::strerror(errno));
  std::fclose(probe);
  if (!existed) std::filesystem::remove(file, ec);
}

void XlsxSink::on_finding(const Finding& finding) {
  (void)finding;  // the Findings sheet is written from the run's summary (deduplicated, counted)
}

int XlsxSink::column(const std::string& module) {
  if (const auto it = columns_.find(module); it != columns_.end()) return it->second;
  if (int(column_names_.size()) >= options_.max_modules) {
    ++dropped_modules_;
    return -1;
  }
  const int c = int(column_names_.size());
  columns_.emplace(module, c);
  column_names_.push_back(module);
  return c;
}

void XlsxSink::on_step(const StepMetrics& m) {
  if (m.step % options_.every != 0) return;
  if (std::int64_t(rows_.size()) >= options_.max_steps) {
    ++skipped_steps_;
    return;
  }
  Row row;
  row.step = m.step;
  row.loss = m.loss;
  for (const ModuleMetrics& module : m.modules) {
    const std::string label = detail::module_label(module.module);
    if (module.grad_norm || module.update_ratio) {
      const int c = column(label);
      if (c >= 0 && module.grad_norm) row.grad_norm.emplace_back(c, *module.grad_norm);
      if (c >= 0 && module.update_ratio) row.update_ratio.emplace_back(c, *module.update_ratio);
    }
    if (module.activations) {
      if (std::int64_t(activations_.size()) < options_.max_activation_rows)
        activations_.push_back({m.step, label, *module.activations});
      else
        ++dropped_activation_rows_;
    }
  }
  rows_.push_back(std::move(row));
}

void XlsxSink::on_run_end(const RunSummary& s) {
  XlsxWorkbook book(path_);
  XlsxSheet& findings = book.add_sheet("Findings", {"step", "last step", "steps tripped", "severity", "rule",
                                                    "phase", "module", "op", "message", "suggestion"});
  for (const Finding& f : s.findings) {
    findings.add_row({f.step, f.last_step, f.count, std::string(severity_name(f.severity)), f.rule,
                      std::string(phase_name(f.phase)), f.module, f.op, f.message, f.suggestion},
                     tone(f.severity));
  }
  XlsxSheet& loss = book.add_sheet("Loss", {"step", "loss"});
  for (const Row& row : rows_) {
    if (row.loss) loss.add_row({row.step, *row.loss});
  }
  if (loss.rows() > 0) book.add_line_chart("Loss", 0, 1, "Loss", "loss");
  std::vector<std::int64_t> steps;
  std::vector<std::vector<std::pair<int, double>>> grads, ratios;
  for (const Row& row : rows_) {
    steps.push_back(row.step);
    grads.push_back(row.grad_norm);
    ratios.push_back(row.update_ratio);
  }
  wide_sheet(book, "Gradients", "Gradient norm by module", "gradient norm", column_names_, grads, steps,
             options_.chart_modules);
  wide_sheet(book, "Update ratio", "Update / weight norm by module", "update / weight norm", column_names_,
             ratios, steps, options_.chart_modules);
  XlsxSheet& activations = book.add_sheet("Activations", {"step", "module", "outputs", "values", "nonfinite",
                                                          "zero fraction", "abs max", "dead fraction"});
  for (const ActivationRow& r : activations_) {
    activations.add_row({r.step, r.module, r.a.outputs, r.a.values, r.a.nonfinite, r.a.zero_fraction(),
                         r.a.abs_max, optional_number(r.a.dead_fraction)},
                        r.a.nonfinite > 0 ? RowTone::error : RowTone::plain);
  }
  XlsxSheet& run = book.add_sheet("Run", {"key", "value"});
  std::int64_t errors = 0;
  std::int64_t warnings = 0;
  for (const Finding& f : s.findings) {
    errors += f.severity == Severity::error ? 1 : 0;
    warnings += f.severity == Severity::warning ? 1 : 0;
  }
  run.add_row({std::string("steps"), s.steps});
  run.add_row({std::string("first step"), s.first_step});
  run.add_row({std::string("last step"), s.last_step});
  run.add_row({std::string("observations"), s.observations});
  run.add_row({std::string("errors"), errors}, errors > 0 ? RowTone::error : RowTone::plain);
  run.add_row({std::string("warnings"), warnings}, warnings > 0 ? RowTone::warning : RowTone::plain);
  run.add_row({std::string("flight recorder"),
               s.flight_recorder ? XlsxCell(s.flight_recorder->string()) : XlsxCell(std::string("none"))});
  run.add_row({std::string("steps not kept (beyond max_steps)"), skipped_steps_});
  run.add_row({std::string("modules not kept (beyond max_modules)"), dropped_modules_});
  run.add_row({std::string("activation rows not kept"), dropped_activation_rows_});
  for (const auto& [key, value] : config_) run.add_row({"config." + key, value});
  book.close();
}

}  // namespace tfdebug
