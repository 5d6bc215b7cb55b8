// A run directory read into the dashboard (tfdebug/serve/run_dir_feed.hpp).
#include "tfdebug/serve/run_dir_feed.hpp"

#include <system_error>
#include <utility>

#include "tfdebug/core/error.hpp"
#include "tfdebug/export/metrics_files.hpp"
#include "tfdebug/session/run_report.hpp"

namespace tfdebug::serve {

RunDirFeed::RunDirFeed(std::filesystem::path run_dir, Dashboard& dashboard)
    : dir_(std::move(run_dir)), dashboard_(dashboard) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir_, ec))
    throw Error(dir_.string() +
                ": not a folder: expected a run directory (RunConfig::run_dir, tfdebug demo --out)");
}

void RunDirFeed::send_new_steps() {
  const std::filesystem::path metrics = dir_ / "metrics.jsonl";
  std::error_code ec;
  if (!std::filesystem::exists(metrics, ec)) return;
  const auto step = [&](const StepMetrics& m) {
    ++steps_;
    dashboard_.on_step(m);
  };
  offset_ = read_metrics_jsonl(metrics, step, offset_).end_offset;
}

bool RunDirFeed::poll() {
  if (ended_) return true;
  send_new_steps();
  std::error_code ec;

  // report.json: read again only when it changed (a rename gives it a new time or size).
  const std::filesystem::path report_path = dir_ / "report.json";
  const auto time = std::filesystem::last_write_time(report_path, ec);
  if (!ec) {
    const auto size = std::filesystem::file_size(report_path, ec);
    if (!ec && (time != report_time_ || size != report_size_)) {
      try {
        const RunReport report = read_run_report(report_path);
        report_time_ = time;
        report_size_ = size;
        report_error_.clear();
        for (const Finding& f : report.summary.findings) {
          std::string key = f.rule;
          key += '\n';
          key += f.module;
          key += '\n';
          key += f.op;
          key += '\n';
          key += phase_name(f.phase);
          if (sent_.insert(std::move(key)).second) dashboard_.on_finding(f);
        }
        if (report.summary.complete) {
          // The last lines of metrics.jsonl were flushed before report.json said complete.
          send_new_steps();
          dashboard_.on_run_end(report.summary);
          ended_ = true;
        }
      } catch (const Error& e) {
        report_error_ = e.what();
      }
    }
  }
  dashboard_.load_run_files();
  return ended_;
}

}  // namespace tfdebug::serve
