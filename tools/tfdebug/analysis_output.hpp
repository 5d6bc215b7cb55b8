// Where `tfdebug explain`, `attack` and `robust` send their result besides the text they print:
// stdout as one JSON object (--json), a run directory's analyses, shown by that run's HTML report
// (--run-dir), and a page of its own (--html). docs/html-report.md, "Analyses".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace tfdebug::cli {

struct AnalysisOutput {
  bool json = false;    // print the result as JSON on stdout (and nothing else there)
  std::string run_dir;  // save it into this run directory's analyses/
  std::string html;     // write it as a page of its own

  // True when the result is needed as JSON at all.
  bool wanted() const { return json || !run_dir.empty() || !html.empty(); }

  // tfdebug::Error now, before any work, for a --run-dir that is not a folder.
  void check() const;

  // Prints `result` (--json), saves it with the PNGs named (--run-dir), writes the page (--html);
  // "saved ..."/"wrote ..." lines go to stderr. `extra` fields join the saved and drawn result
  // only (the input's values, the features' names: what the page draws beside the attributions).
  void emit(std::string_view kind, const std::string& title, const nlohmann::json& result,
            const std::vector<std::string>& images = {}, const nlohmann::json& extra = nullptr) const;
};

// --run-dir and --html, documented for `command` ("explain", "attack", "robust").
void add_analysis_options(CLI::App* cmd, AnalysisOutput* output);

}  // namespace tfdebug::cli
