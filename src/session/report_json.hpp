// JSON writers of the run directory (report.json, flight_recorder.json); schemas in
// docs/live-debugging.md. Private: nlohmann-json stays out of the public headers.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tfdebug/session/finding.hpp"
#include "tfdebug/session/flight_recorder.hpp"
#include "tfdebug/session/run_summary.hpp"

namespace tfdebug::detail {

// A number as JSON (NaN and Inf as null), a list as an array, text as a string.
nlohmann::ordered_json evidence_json(const EvidenceValue& value);
nlohmann::ordered_json finding_json(const Finding& finding);
// RunConfig::entries(): what report.json's "config" holds.
using ConfigEntries = std::vector<std::pair<std::string, std::string>>;
// report.json: the summary, with "complete" from summary.complete, and the configuration.
nlohmann::ordered_json report_json(const RunSummary& summary, const ConfigEntries& config);
void write_flight_recorder_json(const std::filesystem::path& path, const Finding& trigger,
                                const std::vector<RecordedStep>& steps);
// Writes `text` to `path` through a temporary file and a rename, so readers never see half a
// report. Throws tfdebug::Error naming the path.
void write_text_file(const std::filesystem::path& path, const std::string& text);

}  // namespace tfdebug::detail
