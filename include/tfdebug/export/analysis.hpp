// Analyses of a model kept beside its run: what `tfdebug explain`, `tfdebug attack` and
// `tfdebug robust` found (each command's --json object, and the PNGs it drew), saved into a run
// directory's analyses/ folder so that the run's HTML report shows them in its "Analyses" section
// (`tfdebug report RUN_DIR -o report.html`), or written as a page of their own. docs/html-report.md.
//
//   tfdebug::Analysis a{.kind = "explain", .title = "integrated-gradients of output 0 of iris.pt",
//                       .result_json = R"({"method": "integrated-gradients", ...})",
//                       .images = {"grad_cam.png"}};
//   tfdebug::save_analysis("runs/exp1", a);               // runs/exp1/analyses/0001-explain.json
//   tfdebug::write_analysis_html({a}, "explain.html");    // the same section, a page of its own
//
// A saved analysis is one JSON file: {"format": "tfdebug-analysis", "version": 1, "kind", "title",
// "written_by", "result": {...}, "images": [{"name", "png": base64}]}. The page reads the result
// by kind (docs/html-report.md lists the fields each kind draws).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "tfdebug/export/html_report.hpp"

namespace tfdebug {

struct Analysis {
  std::string kind;         // "explain", "attack" or "robust": how the page draws `result_json`
  std::string title;        // one line naming what was analysed
  std::string result_json;  // one JSON object: the command's --json output
  std::vector<std::filesystem::path> images;  // PNG files drawn for it, embedded in the record
};

// The most images a record holds, and the largest PNG embedded.
inline constexpr std::size_t kMaxAnalysisImages = 16;
inline constexpr std::uintmax_t kMaxAnalysisImageBytes = std::uintmax_t(8) << 20;

// Writes `analysis` as run_dir/analyses/NNNN-KIND.json (NNNN one more than the highest there; a
// file is never overwritten, so two processes saving at once both keep theirs) and returns its
// path. tfdebug::Error for an unknown kind, a result that is not a JSON object, an image that is
// not a PNG file (or is larger than kMaxAnalysisImageBytes), or a folder that cannot be written.
std::filesystem::path save_analysis(const std::filesystem::path& run_dir, const Analysis& analysis);

// Writes a page that holds only the analyses' section (through a temporary file and a rename).
HtmlReportWritten write_analysis_html(const std::vector<Analysis>& analyses, const std::filesystem::path& out,
                                      const HtmlReportOptions& options = {});

}  // namespace tfdebug
