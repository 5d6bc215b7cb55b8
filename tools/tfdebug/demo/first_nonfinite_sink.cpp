#include "first_nonfinite_sink.hpp"

#include <cmath>
#include <limits>

#include "tfdebug/core/stats.hpp"

namespace tfdebug::demo {

void FirstNonFiniteSink::begin_step(std::int64_t /*step*/) {
  std::lock_guard<std::mutex> lock(mutex_);
  gradient_square_sum_ = 0;
  gradient_seen_ = false;
}

void FirstNonFiniteSink::observe(const Observation& observation) {
  static const StatsOptions kOptions;
  const Stats stats = compute_stats(observation.value, kOptions);
  std::lock_guard<std::mutex> lock(mutex_);
  ++observations_;
  if (observation.role == Role::gradient) {
    gradient_seen_ = true;
    gradient_square_sum_ +=
        stats.nonfinite() > 0 ? std::numeric_limits<double>::infinity() : stats.l2 * stats.l2;
  }
  if (stats.nonfinite() == 0) return;
  NonFiniteSighting sighting{observation.step,
                             observation.phase,
                             observation.role,
                             std::string(observation.module),
                             std::string(observation.op),
                             stats.nan,
                             stats.pos_inf + stats.neg_inf,
                             observation.inputs_finite};
  if (!first_) first_ = sighting;
  if (!first_producer_ && observation.role == Role::output && observation.inputs_finite == true) {
    first_producer_ = sighting;
  }
}

void FirstNonFiniteSink::end_step(std::int64_t /*step*/, std::optional<double> /*loss*/) {
  std::lock_guard<std::mutex> lock(mutex_);
  gradient_norms_.push_back(gradient_seen_ ? std::sqrt(gradient_square_sum_)
                                           : std::numeric_limits<double>::quiet_NaN());
}

std::optional<NonFiniteSighting> FirstNonFiniteSink::first() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return first_;
}

std::optional<NonFiniteSighting> FirstNonFiniteSink::first_producer() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return first_producer_;
}

std::int64_t FirstNonFiniteSink::observations() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return observations_;
}

std::vector<double> FirstNonFiniteSink::gradient_norms() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return gradient_norms_;
}

}  // namespace tfdebug::demo
