#include "watch_schedule.hpp"

#include <algorithm>

namespace tfdebug::torch::detail {

// Note [Watch budget] (watch_schedule.hpp)
bool WatchSchedule::due(std::int64_t step) const {
  const std::int64_t every = std::max<std::int64_t>(1, settings_.every);
  if (settings_.budget <= 0) return step % every == 0;
  if (samples_ == 0) return true;
  const std::int64_t gap = step - last_;
  if (gap < 0) return true;  // the loop numbers its steps afresh (a new run on the same attachment)
  if (gap < every) return false;
  if (costs_measured_ == 0 || steps_timed_ == 0) return true;  // this sample measures what one costs
  if (gap >= std::max(every, settings_.every_max)) return true;
  return credit_ >= sample_cost();
}

void WatchSchedule::ended(std::int64_t step, bool sampled, double seconds) {
  seconds = std::max(0.0, seconds);
  if (!sampled) {
    step_seconds_ = steps_timed_ == 0 ? seconds : 0.9 * step_seconds_ + 0.1 * seconds;
    ++steps_timed_;
    credit_ += settings_.budget * seconds;
    return;
  }
  if (samples_ > 0 && steps_timed_ > 0) {  // the first sample warms up: not a measure
    costs_[std::size_t(costs_measured_ % std::int64_t(costs_.size()))] =
        std::max(0.0, seconds - step_seconds_);
    ++costs_measured_;
  }
  ++samples_;
  last_ = step;
  credit_ = 0;
}

double WatchSchedule::sample_cost() const {
  if (costs_measured_ == 0) return 0;
  if (costs_measured_ < std::int64_t(costs_.size())) {  // their mean, until there are three
    double sum = 0;
    for (std::int64_t i = 0; i < costs_measured_; ++i) sum += costs_[std::size_t(i)];
    return sum / double(costs_measured_);
  }
  std::array<double, 3> sorted = costs_;
  std::sort(sorted.begin(), sorted.end());
  return sorted[1];
}

}  // namespace tfdebug::torch::detail
