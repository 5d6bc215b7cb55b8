// XlsxSink: a debugged training run as an Excel workbook, written when the run finishes
// (docs/exports.md, "From a training run"). Sheets:
//   Findings     step, last step, steps tripped, severity, rule, phase, module, op, message,
//                suggestion; rows coloured by severity
//   Loss         step, loss; a line chart
//   Gradients    step, then one column per module: its gradient norm; a line chart of the
//                `chart_modules` modules with the largest gradient norm (all are in the table)
//   Update ratio step, then one column per module: ||update|| / ||weight||; a line chart of the
//                `chart_modules` modules with the largest ratio
//   Activations  step, module, outputs, values, nonfinite, zero fraction, abs max, dead fraction
//   Run          the summary and the RunConfig's keys
// Numbers are numbers (NaN and Inf, which Excel lacks, are blank cells filled red with a comment,
// gaps in the charts); charts of values spanning decades have a log axis (Note [Readable charts]
// in xlsx.hpp); every sheet has a bold frozen header row and an auto-filter.
//
//   session.add_sink(std::make_shared<tfdebug::XlsxSink>("run.xlsx", session.config()));
//
// Memory is bounded: steps are kept every `every` steps, up to `max_steps` rows (the rest are
// counted on the Run sheet), at most `max_modules` module columns and `max_activation_rows`
// rows of Activations.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tfdebug/session/run_config.hpp"
#include "tfdebug/session/sink.hpp"

namespace tfdebug {

struct XlsxSinkOptions {
  std::int64_t every = 1;                     // keep steps with step % every == 0
  std::int64_t max_steps = 10000;             // kept steps (rows of Loss, Gradients, Update ratio)
  int max_modules = 200;                      // module columns of Gradients and Update ratio
  std::int64_t max_activation_rows = 100000;  // rows of Activations
  // Series of the Gradients and Update ratio charts: the modules with the largest value over the
  // run (a non-finite value ranks first: that is where a run went wrong); more lines are a tangle.
  int chart_modules = 8;
};

class XlsxSink : public Sink {
 public:
  // Checks that `path` can be written (tfdebug::Error naming it when not); writes at on_run_end.
  XlsxSink(std::string path, const RunConfig& config, XlsxSinkOptions options = {});
  // The same, with the configuration's entries as given (RunConfig::entries() of a run read back
  // from its report.json: tfdebug::rebuild_exports).
  XlsxSink(std::string path, std::vector<std::pair<std::string, std::string>> config_entries,
           XlsxSinkOptions options = {});

  void on_finding(const Finding& finding) override;
  void on_step(const StepMetrics& metrics) override;
  bool wants_step_metrics() const noexcept override { return true; }
  // Writes the workbook (tfdebug::Error naming the path when it cannot).
  void on_run_end(const RunSummary& summary) override;

 private:
  struct Row {
    std::int64_t step = 0;
    std::optional<double> loss;
    std::vector<std::pair<int, double>> grad_norm, update_ratio;  // (module column, value)
  };
  int column(const std::string& module);

  std::string path_;
  std::vector<std::pair<std::string, std::string>> config_;
  XlsxSinkOptions options_;
  std::vector<Row> rows_;
  struct ActivationRow {
    std::int64_t step;
    std::string module;
    ActivationSummary a;
  };
  std::vector<ActivationRow> activations_;
  std::map<std::string, int> columns_;
  std::vector<std::string> column_names_;
  std::int64_t skipped_steps_ = 0;
  std::int64_t dropped_modules_ = 0;
  std::int64_t dropped_activation_rows_ = 0;
};

}  // namespace tfdebug
