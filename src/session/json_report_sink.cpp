#include "tfdebug/session/json_report_sink.hpp"

#include "report_json.hpp"

namespace tfdebug {

JsonReportSink::JsonReportSink(std::filesystem::path path) : path_(std::move(path)) {}

void JsonReportSink::on_finding(const Finding& /*finding*/) {}

void JsonReportSink::on_run_end(const RunSummary& summary) {
  detail::write_text_file(path_, detail::report_json(summary).dump(1) + "\n");
}

}  // namespace tfdebug
