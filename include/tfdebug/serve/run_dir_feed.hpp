// RunDirFeed: a run directory read into a Sink (the live dashboard), for `tfdebug serve RUN_DIR`:
// a finished run at once, a run that another process is still writing as it grows. Each poll
// sends the new lines of metrics.jsonl (on_step), the findings report.json holds that were not
// sent yet (on_finding), and the run's end once report.json says it is complete (on_run_end).
//
//   auto dashboard = tfdebug::serve::Dashboard::start({.port = 8080, .run_dir = "runs/exp1"});
//   tfdebug::serve::RunDirFeed feed("runs/exp1", *dashboard);
//   while (!feed.poll()) std::this_thread::sleep_for(std::chrono::milliseconds(500));
//
// Note [Following a run] (tools/tfdebug/run_follower.hpp) says why polling works: metrics.jsonl
// grows by whole lines flushed once a step (a half-written last line waits for the next poll),
// report.json is replaced atomically at most once a second.
#pragma once

#include <cstdint>
#include <filesystem>
#include <set>
#include <string>

#include "tfdebug/serve/dashboard.hpp"

namespace tfdebug::serve {

class RunDirFeed {
 public:
  // tfdebug::Error when `run_dir` is not a directory.
  RunDirFeed(std::filesystem::path run_dir, Dashboard& dashboard);

  // Sends what is new. True once the run is complete and everything was sent. tfdebug::Error for
  // a metrics.jsonl line that is not one; a report.json that fails to read (being replaced, or
  // broken) is left for the next poll, its error in report_error().
  bool poll();
  const std::string& report_error() const noexcept { return report_error_; }
  std::int64_t steps_sent() const noexcept { return steps_; }

 private:
  void send_new_steps();

  std::filesystem::path dir_;
  Dashboard& dashboard_;
  std::uint64_t offset_ = 0;
  std::int64_t steps_ = 0;
  std::set<std::string> sent_;  // findings by rule, module, op and phase
  std::filesystem::file_time_type report_time_{};
  std::uintmax_t report_size_ = 0;
  bool ended_ = false;
  std::string report_error_;
};

}  // namespace tfdebug::serve
