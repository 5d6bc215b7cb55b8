// The HTML report: one self-contained page (no network, no CDN: its scripts, style and data are
// inline) that any browser opens, for a run directory (`tfdebug report RUN_DIR -o report.html`)
// or a checkpoint inspection (`tfdebug inspect FILE --html report.html`). docs/html-report.md
// says what each section shows and how a very large model is aggregated.
//
//   tfdebug::write_run_html("runs/exp1", "runs/exp1/report.html");
//
//   const tfdebug::inspect::Inspection inspection = tfdebug::inspect::inspect({"model.safetensors"});
//   tfdebug::write_inspection_html(inspection, "model.html", {.title = "model.safetensors"});
//
// The data goes into the page as JSON in a <script type="application/json"> element, escaped so
// that no text from a file can end it or run (Note [Script-safe JSON] in src/export/html_page.cpp);
// the page's own scripts only ever set text, never markup, from that data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "tfdebug/inspect/inspection.hpp"
#include "tfdebug/session/finding.hpp"

namespace tfdebug {

// The bounds that keep a page small and fast whatever the input (docs/html-report.md).
struct HtmlReportOptions {
  std::string title;  // the page's title; empty: the run directory or the first file's name
  // Checkpoints: rows of the per-tensor table embedded in the page (tensors with a finding
  // first, then the largest); the module tree aggregates every tensor regardless.
  std::size_t max_tensor_rows = 2000;
  // Checkpoints: module-tree nodes embedded; deeper levels past it are summed into their parent.
  std::size_t max_tree_nodes = 3000;
  // Runs: points per metric series; a longer run is shown in buckets of consecutive steps
  // (the mean of the finite values; a bucket holding a NaN or Inf is marked non-finite).
  std::size_t max_steps = 1000;
  // Runs: points per per-module series (heatmaps, per-module charts), bucketed the same way.
  std::size_t max_module_steps = 250;
  // Runs: modules in the per-layer heatmaps (those with findings first, then in path order).
  std::size_t max_modules = 100;
  // Runs: ops of the flight recorder's chain shown around the op that made the first NaN/Inf.
  std::size_t chain_before = 24;
  std::size_t chain_after = 16;
  // Both: ops of the model graph embedded (a run directory's model.onnx, an ONNX checkpoint's
  // graph), in execution order; the page says how many more there are.
  std::size_t max_graph_nodes = 3000;
  // Runs: the newest saved analyses shown (explain, attack, robust: tfdebug/export/analysis.hpp).
  std::size_t max_analyses = 20;
};

// What a writer wrote.
struct HtmlReportWritten {
  std::uintmax_t bytes = 0;            // of the page
  std::size_t tensor_rows = 0;         // checkpoints: table rows embedded (of Inspection::tensors)
  std::size_t tree_nodes = 0;          // checkpoints: module-tree nodes embedded
  std::size_t steps_shown = 0;         // runs: points per series (after bucketing)
  std::size_t step_bucket = 1;         // runs: steps per point of the loss
  std::size_t module_step_bucket = 1;  // runs: steps per point of the per-module series
};

// Reads RUN_DIR (report.json; metrics.jsonl, flight_recorder.json, profile.json and model.onnx
// when present) and writes its page to `out` (through a temporary file and a rename). tfdebug::Error
// naming the file and what was expected for a missing or malformed input, or an unwritable out.
HtmlReportWritten write_run_html(const std::filesystem::path& run_dir, const std::filesystem::path& out,
                                 const HtmlReportOptions& options = {});

// Writes the page of an inspection (tfdebug::inspect::inspect) to `out`.
HtmlReportWritten write_inspection_html(const inspect::Inspection& inspection,
                                        const std::filesystem::path& out,
                                        const HtmlReportOptions& options = {});

// The building blocks, for tests and other writers: the page's data as JSON text, and the page
// around it. `kind` is "run" or "checkpoint".
std::string run_report_data(const std::filesystem::path& run_dir, const HtmlReportOptions& options,
                            HtmlReportWritten* written = nullptr);
std::string inspection_report_data(const inspect::Inspection& inspection, const HtmlReportOptions& options,
                                   HtmlReportWritten* written = nullptr);
std::string html_page(std::string_view kind, std::string_view title, std::string_view data_json);

// The live dashboard's page (tfdebug::serve): the run page with no data of its own; it reads the
// server's event stream ("events", relative to the page, with the page's ?token=) and draws the run
// as it goes. Its Content-Security-Policy allows requests to its own origin and nothing else.
std::string html_live_page(std::string_view title);
// A finding as the page reads it, as JSON text (the report's data and the dashboard's events).
std::string html_finding_json(const Finding& finding);
// One section's data from a run directory's side files, as JSON text, as the run page embeds it:
// "flight" (flight_recorder.json), "profile" (profile.json) or "graph" (model.onnx); "null" when
// the file is absent. tfdebug::Error as run_report_data for a malformed file or another part.
std::string run_report_part(const std::filesystem::path& run_dir, std::string_view part,
                            const HtmlReportOptions& options = {});

// JSON text made safe inside a <script> element: '<', '>', '&' and U+2028/U+2029 as \u escapes
// (they can only occur inside JSON strings, so the value is unchanged).
std::string script_safe_json(std::string_view json);

}  // namespace tfdebug
