#include "tfdebug/session/json_report_sink.hpp"

#include "report_json.hpp"

namespace tfdebug {

JsonReportSink::JsonReportSink(std::filesystem::path path,
                               std::vector<std::pair<std::string, std::string>> config)
    : path_(std::move(path)), config_(std::move(config)) {}

void JsonReportSink::on_finding(const Finding& /*finding*/) {}

void JsonReportSink::on_run_end(const RunSummary& summary) {
  write(summary);
}

void JsonReportSink::write(const RunSummary& summary) {
  detail::write_text_file(path_, detail::report_json(summary, config_).dump(1) + "\n");
}

}  // namespace tfdebug
