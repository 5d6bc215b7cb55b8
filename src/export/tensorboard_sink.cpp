#include "tfdebug/export/tensorboard_sink.hpp"

#include <algorithm>
#include <map>

#include "step_scalars.hpp"

namespace tfdebug {

namespace {

// One finding as Markdown (TensorBoard's text plugin renders it).
std::string markdown(const Finding& f) {
  std::string where = f.module.empty() ? std::string() : " in `" + f.module + "`";
  if (!f.op.empty()) where = " `" + f.op + "`" + where;
  std::string text = "**" + std::string(severity_name(f.severity)) + "** `" + f.rule + "`" + where + " (" +
                     std::string(phase_name(f.phase)) + ", step " + std::to_string(f.step) + ")\n\n" +
                     f.message;
  if (!f.suggestion.empty()) text += "\n\n*Try:* " + f.suggestion;
  return text;
}

}  // namespace

TensorBoardSink::TensorBoardSink(const std::string& run_dir, TensorBoardOptions options)
    : writer_(run_dir, options) {}

void TensorBoardSink::on_finding(const Finding& finding) {
  pending_.push_back(finding);
}

// The findings of one rule and step share one text entry (tag and step identify an entry).
void TensorBoardSink::write_findings() {
  std::map<std::pair<std::string, std::int64_t>, std::string> entries;
  for (const Finding& f : pending_) {
    std::string& text = entries[{f.rule, f.step}];
    text += (text.empty() ? "" : "\n\n---\n\n") + markdown(f);
  }
  for (const auto& [key, text] : entries) writer_.add_text("findings/" + key.first, text, key.second);
  pending_.clear();
}

void TensorBoardSink::on_step(const StepMetrics& m) {
  detail::for_each_scalar(m, [&](std::string_view metric, const std::string& module, double value) {
    writer_.add_scalar(module.empty() ? std::string(metric) : std::string(metric) + "/" + module, value,
                       m.step);
  });
  for (const HistogramSnapshot& h : m.weights)
    writer_.add_histogram("weights/" + h.name, h.counts, h.min, h.max, h.count, h.sum, h.sum_squares, m.step);
  for (const HistogramSnapshot& h : m.activations) {
    writer_.add_histogram("activations/" + detail::module_label(h.name), h.counts, h.min, h.max, h.count,
                          h.sum, h.sum_squares, m.step);
  }
  write_findings();
}

void TensorBoardSink::on_run_end(const RunSummary& s) {
  write_findings();
  std::int64_t errors = 0;
  std::int64_t warnings = 0;
  for (const Finding& f : s.findings) {
    errors += f.severity == Severity::error ? 1 : 0;
    warnings += f.severity == Severity::warning ? 1 : 0;
  }
  std::string text = "**" + std::to_string(s.steps) + " steps** (" + std::to_string(s.first_step) + "–" +
                     std::to_string(s.last_step) + "), " + std::to_string(s.observations) +
                     " observations: " + std::to_string(errors) + " errors, " + std::to_string(warnings) +
                     " warnings\n\n";
  if (!s.findings.empty()) {
    text += "| severity | rule | step | module | op | steps tripped |\n|---|---|---|---|---|---|\n";
    for (const Finding& f : s.findings) {
      text += "| " + std::string(severity_name(f.severity)) + " | " + f.rule + " | " +
              std::to_string(f.step) + " | " + f.module + " | " + f.op + " | " + std::to_string(f.count) +
              " |\n";
    }
  }
  if (s.flight_recorder) text += "\nFlight recorder: `" + s.flight_recorder->string() + "`\n";
  writer_.add_text("run", text, s.last_step);
  writer_.close();
}

}  // namespace tfdebug
