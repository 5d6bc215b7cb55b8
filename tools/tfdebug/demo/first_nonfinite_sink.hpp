// The sink `tfdebug demo` runs with until the Session hub lands: it scans every observation with
// the stats kernel and remembers where the first non-finite value appeared (step, phase, module,
// op, and whether that op produced it from finite inputs or only passed it on), and the
// gradient norm of each step. Thread-safe; prints nothing itself.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tfdebug/session/observation.hpp"

namespace tfdebug::demo {

struct NonFiniteSighting {
  std::int64_t step = 0;
  Phase phase = Phase::forward;
  Role role = Role::output;
  std::string module;
  std::string op;
  std::int64_t nan = 0;
  std::int64_t inf = 0;
  std::optional<bool> inputs_finite;
};

class FirstNonFiniteSink : public ObservationSink {
 public:
  explicit FirstNonFiniteSink(Tier tier) : tier_(tier) {}

  void begin_step(std::int64_t step) override;
  void observe(const Observation& observation) override;
  void end_step(std::int64_t step, std::optional<double> loss) override;
  Tier tier() const noexcept override { return tier_; }
  bool should_stop() const noexcept override { return false; }

  // The first non-finite tensor observed (in callback order), and the first op output that was
  // non-finite while its inputs were finite: the op that produced the bad value.
  std::optional<NonFiniteSighting> first() const;
  std::optional<NonFiniteSighting> first_producer() const;
  std::int64_t observations() const;
  // Per step: the L2 norm over all parameter gradients (NaN when none was observed).
  std::vector<double> gradient_norms() const;

 private:
  Tier tier_;
  mutable std::mutex mutex_;
  std::optional<NonFiniteSighting> first_;
  std::optional<NonFiniteSighting> first_producer_;
  std::int64_t observations_ = 0;
  double gradient_square_sum_ = 0;
  bool gradient_seen_ = false;
  std::vector<double> gradient_norms_;
};

}  // namespace tfdebug::demo
