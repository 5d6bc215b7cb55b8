#include "run_follower.hpp"

#include <cmath>

#include "tfdebug/core/error.hpp"

namespace tfdebug::cli {
namespace {

constexpr auto kRateWindow = std::chrono::seconds(10);

}  // namespace

RunFollower::RunFollower(std::filesystem::path run_dir) : dir_(std::move(run_dir)) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir_, ec))
    throw Error(dir_.string() +
                ": not a directory: expected a run directory (RunConfig::run_dir) that a run "
                "writes report.json and metrics.jsonl into");
}

void RunFollower::add_loss(double step, double value) {
  // Note [Following a run]: bounded, whatever the run's length.
  if (loss_seen_++ % stride_ != 0) {
    // Not a kept step; but a non-finite loss replaces the last kept one, so that a gap stays seen.
    if (!std::isfinite(value) && !loss_values_.empty() && std::isfinite(loss_values_.back())) {
      loss_steps_.back() = step;
      loss_values_.back() = value;
    }
    return;
  }
  loss_steps_.push_back(step);
  loss_values_.push_back(value);
  if (loss_steps_.size() < kMaxPoints) return;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < loss_steps_.size(); i += 2) {
    std::size_t pick = i;
    if (i + 1 < loss_steps_.size() && std::isfinite(loss_values_[i]) && !std::isfinite(loss_values_[i + 1]))
      pick = i + 1;
    loss_steps_[kept] = loss_steps_[pick];
    loss_values_[kept] = loss_values_[pick];
    ++kept;
  }
  loss_steps_.resize(kept);
  loss_values_.resize(kept);
  stride_ *= 2;
  loss_seen_ = 0;
}

void RunFollower::reset_metrics() {
  offset_ = 0;
  steps_ = 0;
  last_step_.reset();
  loss_steps_.clear();
  loss_values_.clear();
  stride_ = 1;
  loss_seen_ = 0;
  latest_modules_.clear();
  samples_.clear();
}

bool RunFollower::poll_metrics(Clock::time_point now) {
  const std::filesystem::path path = dir_ / "metrics.jsonl";
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) {
    const bool changed = metrics_found_;
    if (metrics_found_) reset_metrics();
    metrics_found_ = false;
    return changed;
  }
  metrics_found_ = true;
  if (size < offset_) reset_metrics();  // a new run in the same directory
  if (size == offset_) return false;
  const std::int64_t before = steps_;
  const MetricsFileRead read = read_metrics_jsonl(
      path,
      [&](const StepMetrics& m) {
        ++steps_;
        last_step_ = m.step;
        if (m.loss) add_loss(static_cast<double>(m.step), *m.loss);
        latest_modules_ = m.modules;
      },
      offset_);
  offset_ = read.end_offset;
  const bool was_cut = cut_off_;
  cut_off_ = read.cut_off;
  if (steps_ > before) samples_.push_back({now, steps_});
  while (samples_.size() > 2 && now - samples_[1].time > kRateWindow) samples_.pop_front();
  return steps_ > before || was_cut != cut_off_;
}

bool RunFollower::poll_report() {
  const std::filesystem::path path = dir_ / "report.json";
  std::error_code ec;
  const auto time = std::filesystem::last_write_time(path, ec);
  const std::uintmax_t size = ec ? 0 : std::filesystem::file_size(path, ec);
  if (ec) {
    const bool changed = report_.has_value() || !report_error_.empty();
    report_.reset();
    report_error_.clear();
    report_size_ = 0;
    return changed;
  }
  if ((report_ || !report_error_.empty()) && time == report_time_ && size == report_size_) return false;
  report_time_ = time;
  report_size_ = size;
  try {
    report_ = read_run_report(path);
    report_error_.clear();
  } catch (const Error& e) {
    report_error_ = e.what();  // the previous report, if any, stays
  }
  return true;
}

bool RunFollower::poll(Clock::time_point now) {
  const bool metrics = poll_metrics(now);
  const bool report = poll_report();
  return metrics || report;
}

std::optional<double> RunFollower::step_rate(Clock::time_point now) const {
  if (samples_.size() < 2) return std::nullopt;
  // From the oldest sample kept (the last one before the window) to now: a run that stops
  // writing shows a rate that falls, not the last one it had.
  const Sample& from = samples_.front();
  const double seconds = std::chrono::duration<double>(now - from.time).count();
  if (seconds <= 0) return std::nullopt;
  return static_cast<double>(samples_.back().steps - from.steps) / seconds;
}

std::optional<double> RunFollower::idle_seconds(Clock::time_point now) const {
  if (samples_.empty()) return std::nullopt;
  return std::chrono::duration<double>(now - samples_.back().time).count();
}

}  // namespace tfdebug::cli
