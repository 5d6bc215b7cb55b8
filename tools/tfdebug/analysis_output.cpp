#include "analysis_output.hpp"

#include <cstdio>
#include <filesystem>

#include "json_output.hpp"
#include "safe_text.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/export/analysis.hpp"

namespace tfdebug::cli {

void AnalysisOutput::check() const {
  std::error_code ec;
  if (!run_dir.empty() && !std::filesystem::is_directory(run_dir, ec))
    throw Error("--run-dir " + terminal_safe(run_dir) +
                ": not a folder: expected a run directory (tfdebug demo --out, RunConfig::run_dir)");
}

void AnalysisOutput::emit(std::string_view kind, const std::string& title, const nlohmann::json& result,
                          const std::vector<std::string>& images, const nlohmann::json& extra) const {
  if (json) std::fputs((json_text(result) + "\n").c_str(), stdout);
  if (run_dir.empty() && html.empty()) return;
  nlohmann::json saved = result;
  if (extra.is_object()) saved.update(extra);
  Analysis analysis{
      .kind = std::string(kind), .title = title, .result_json = json_text(saved, -1), .images = {}};
  for (const std::string& image : images) analysis.images.emplace_back(image);
  if (!run_dir.empty()) {
    check();
    const std::filesystem::path path = save_analysis(run_dir, analysis);
    std::fprintf(stderr, "saved %s (tfdebug report %s -o report.html shows it)\n",
                 terminal_safe(path.string()).c_str(), terminal_safe(run_dir).c_str());
  }
  if (!html.empty()) {
    const HtmlReportWritten written = write_analysis_html({analysis}, html);
    std::fprintf(stderr, "wrote %s (%llu KB)\n", terminal_safe(html).c_str(),
                 static_cast<unsigned long long>((written.bytes + 1023) / 1024));
  }
}

void add_analysis_options(CLI::App* cmd, AnalysisOutput* output) {
  cmd->add_option("--run-dir", output->run_dir,
                  "Also save the result into this run directory (analyses/NNNN-" + cmd->get_name() +
                      ".json): tfdebug report DIR -o report.html shows it in its Analyses section");
  cmd->add_option("--html", output->html, "Also write the result as an HTML page of its own");
}

}  // namespace tfdebug::cli
