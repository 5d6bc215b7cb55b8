// The flight recorder: per-op summaries of the last N steps in bounded memory. A Session records
// every observation into it and, on the first error-level finding, writes the window around it
// to <run_dir>/flight_recorder.json (schema: docs/live-debugging.md).
//
//   tfdebug::FlightRecorder recorder(/*steps=*/8, /*max_ops_per_step=*/4096);
//   recorder.begin_step(7);
//   recorder.record(observation, tfdebug::compute_stats(observation.value));
//   recorder.end_step(/*loss=*/2.31);
//   for (const tfdebug::RecordedStep& s : recorder.steps()) ...   // oldest first
//
// Summaries are fixed-size records; module and op names are interned once in a bounded table
// (names past max_names are recorded as "<other>"). Not thread-safe: the Session serialises.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tfdebug/core/stats.hpp"
#include "tfdebug/session/observation.hpp"

namespace tfdebug {

struct RecordedOp {
  std::string module;
  std::string op;
  Phase phase = Phase::forward;
  Role role = Role::output;
  std::int64_t count = 0;
  std::int64_t nan = 0;
  std::int64_t inf = 0;                                     // +Inf and -Inf
  double min = 0, max = 0, mean = 0, std = 0, abs_max = 0;  // over finite values (NaN: none)
};

struct RecordedStep {
  std::int64_t step = 0;
  std::optional<double> loss;
  std::int64_t dropped_ops = 0;  // observations past max_ops_per_step
  std::vector<RecordedOp> ops;   // in arrival order
};

class FlightRecorder {
 public:
  FlightRecorder(int steps, int max_ops_per_step, int max_names = 65536);

  void begin_step(std::int64_t step);
  // Empties the open step's record (its producer replays the step).
  void restart_step();
  void record(const Observation& observation, const Stats& stats);
  void end_step(std::optional<double> loss);

  // The kept steps, oldest first (the current step last, if one has begun).
  std::vector<RecordedStep> steps() const;
  int capacity() const noexcept { return static_cast<int>(ring_.size()); }
  std::int64_t dropped_ops() const noexcept { return dropped_total_; }

 private:
  struct Summary {  // fixed size: no allocation per observation once a slot is warm
    std::uint32_t module_id;
    std::uint32_t op_id;
    Phase phase;
    Role role;
    std::int64_t count, nan, inf;
    double min, max, mean, std, abs_max;
  };
  struct Slot {
    std::int64_t step = 0;
    std::optional<double> loss;
    std::int64_t dropped = 0;
    std::vector<Summary> ops;
  };
  std::uint32_t intern(std::string_view name);

  std::vector<Slot> ring_;
  std::size_t max_ops_;
  std::size_t max_names_;
  std::size_t next_ = 0;  // slot the next begin_step takes
  std::size_t used_ = 0;  // slots holding a step
  bool open_ = false;     // a step has begun and not ended
  std::int64_t dropped_total_ = 0;
  std::vector<std::string> names_;
  std::unordered_map<std::string, std::uint32_t> ids_;
  // Producers pass the same stable strings every step (interned module paths, op schema names):
  // a direct-mapped cache by address, checked against the stored name, skips hashing the text.
  struct Recent {
    const char* data = nullptr;
    std::size_t size = 0;
    std::uint32_t id = 0;
  };
  std::array<Recent, 1024> recent_{};
};

}  // namespace tfdebug
