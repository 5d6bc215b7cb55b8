// Follows a run directory while a training run writes it (`tfdebug top`): metrics.jsonl read as
// it grows (only the new lines), report.json read again when it changes. Polling, not inotify:
// it works the same on NFS, in containers and over sshfs.
//
//   RunFollower run("runs/exp1");
//   for (;;) {
//     if (run.poll(std::chrono::steady_clock::now())) redraw(run);
//     std::this_thread::sleep_for(500ms);
//   }
//
// Note [Following a run]: metrics.jsonl is appended and flushed once a step, so its last line may
// be half written when it is read: that part is left for the next poll (read_metrics_jsonl's
// end_offset). report.json is rewritten atomically (a rename) at most once a second, so a read
// sees a whole report; one that fails to read anyway keeps the previous one and says why. A
// metrics.jsonl that shrank is a new run in the same directory: everything is read again.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tfdebug/export/metrics_files.hpp"
#include "tfdebug/session/run_report.hpp"

namespace tfdebug::cli {

class RunFollower {
 public:
  using Clock = std::chrono::steady_clock;

  // tfdebug::Error when `run_dir` is not a directory.
  explicit RunFollower(std::filesystem::path run_dir);

  // Reads what is new; true when anything changed. tfdebug::Error for a metrics.jsonl that is not
  // one (a bad line); report.json's errors are kept in report_error() instead.
  bool poll(Clock::time_point now);

  const std::filesystem::path& run_dir() const noexcept { return dir_; }
  // The loss at (a sample of) the steps read: every step up to kMaxPoints, then every 2nd, 4th...
  // (a step whose loss is not finite is kept over its neighbour, so that gaps stay visible).
  const std::vector<double>& loss_steps() const noexcept { return loss_steps_; }
  const std::vector<double>& loss_values() const noexcept { return loss_values_; }
  std::int64_t steps() const noexcept { return steps_; }  // lines read
  std::optional<std::int64_t> last_step() const noexcept { return last_step_; }
  // The newest step's modules (gradient norms, update ratios, activations).
  const std::vector<ModuleMetrics>& latest_modules() const noexcept { return latest_modules_; }
  bool metrics_found() const noexcept { return metrics_found_; }
  bool cut_off() const noexcept { return cut_off_; }  // the last line is still being written

  // Steps a second over the last ten seconds of polls; nullopt until two polls have seen steps.
  std::optional<double> step_rate(Clock::time_point now) const;
  // Seconds since the last new step was read; nullopt before any.
  std::optional<double> idle_seconds(Clock::time_point now) const;

  const std::optional<RunReport>& report() const noexcept { return report_; }
  const std::string& report_error() const noexcept { return report_error_; }

  static constexpr std::size_t kMaxPoints = 1 << 16;

 private:
  void add_loss(double step, double value);
  void reset_metrics();
  bool poll_metrics(Clock::time_point now);
  bool poll_report();

  std::filesystem::path dir_;
  std::uint64_t offset_ = 0;
  std::int64_t steps_ = 0;
  std::optional<std::int64_t> last_step_;
  bool metrics_found_ = false;
  bool cut_off_ = false;
  std::vector<double> loss_steps_, loss_values_;
  std::int64_t stride_ = 1;     // keep every stride_-th loss
  std::int64_t loss_seen_ = 0;  // losses offered to add_loss
  std::vector<ModuleMetrics> latest_modules_;
  struct Sample {
    Clock::time_point time;
    std::int64_t steps;
  };
  std::deque<Sample> samples_;  // (time, steps) at the polls that read new steps
  std::optional<RunReport> report_;
  std::string report_error_;
  std::filesystem::file_time_type report_time_{};
  std::uintmax_t report_size_ = 0;
};

}  // namespace tfdebug::cli
