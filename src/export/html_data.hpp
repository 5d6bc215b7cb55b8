// Shared by the HTML report's data builders (html_run_data.cpp, html_inspection_data.cpp): numbers
// and findings as the page's scripts read them (src/export/html/common.js).
#pragma once

#include <cmath>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "tfdebug/core/model_graph.hpp"
#include "tfdebug/session/finding.hpp"

namespace tfdebug::detail {

// A number for the page: JSON has no NaN or Inf, so they travel as the strings "NaN", "Inf" and
// "-Inf" (common.js's num() reads them back); null is "no value".
inline nlohmann::json html_number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Inf" : "-Inf";
  return v;
}

inline nlohmann::json html_evidence(const std::vector<Evidence>& evidence) {
  nlohmann::json out = nlohmann::json::array();
  for (const Evidence& e : evidence) {
    nlohmann::json value;
    if (const auto* d = std::get_if<double>(&e.value)) {
      value = html_number(*d);
    } else if (const auto* list = std::get_if<std::vector<std::int64_t>>(&e.value)) {
      // A list of rows can be long: the first 32 say enough on a page.
      nlohmann::json items = nlohmann::json::array();
      for (std::size_t i = 0; i < list->size() && i < 32; ++i) items.push_back((*list)[i]);
      if (list->size() > 32) items.push_back("… " + std::to_string(list->size() - 32) + " more");
      value = items;
    } else {
      value = std::get<std::string>(e.value);
    }
    out.push_back({e.key, value});
  }
  return out;
}

inline nlohmann::json html_finding(const Finding& f) {
  nlohmann::json out = {{"rule", f.rule},
                        {"severity", std::string(severity_name(f.severity))},
                        {"step", f.step},
                        {"last_step", f.last_step},
                        {"count", f.count},
                        {"phase", std::string(phase_name(f.phase))},
                        {"module", f.module},
                        {"op", f.op},
                        {"message", f.message},
                        {"suggestion", f.suggestion},
                        {"evidence", html_evidence(f.evidence)},
                        {"magnitude", html_number(f.magnitude)}};
  if (f.worst) out["worst"] = {{"step", f.worst->step}, {"message", f.worst->message}};
  if (f.latest) out["latest"] = {{"step", f.latest->step}, {"message", f.latest->message}};
  return out;
}

// JSON text for the page: invalid UTF-8 from a file becomes U+FFFD, everything else ASCII.
inline std::string html_dump(const nlohmann::json& doc) {
  return doc.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
}

// The model graph section's data (html_graph_data.cpp): the first `max_nodes` ops of `graph`,
// each with its module, output type and the ops and weights it reads; `source` names the file.
nlohmann::json html_graph(const ModelGraph& graph, const std::string& source, std::size_t max_nodes);

// Writes a page through a temporary file and a rename; tfdebug::Error naming `out` when it cannot.
void write_page_atomically(const std::filesystem::path& out, const std::string& page);

// The analyses section's data (analysis.cpp): the newest `max` records of run_dir/analyses/, read
// back as the page draws them; a record that is not one (hostile, cut off, of a later version) is
// left out with a line in `notes` naming the file and why.
nlohmann::json html_analyses(const std::filesystem::path& run_dir, std::size_t max, nlohmann::json& notes);

}  // namespace tfdebug::detail
