// Which watch steps sample: observe the layer outputs, the parameters and their updates, not
// only the gradients and the loss (Note [Watch budget]).
#pragma once

#include <array>
#include <cstdint>

namespace tfdebug::torch::detail {

// Note [Watch budget]
// ~~~~~~~~~~~~~~~~~~~
// A watch step that samples intercepts every op and hands a few dozen tensors to the rules. What
// that costs is roughly fixed per op and per tensor, so it is a large share of a small model's
// step and a small share of a large one's: +130 us on the zoo MLP's 0.33 ms step (40%), +510 us
// on the encoder's 6.3 ms (8%). Sampling every N steps therefore costs a small model N times
// more of its run than a large one, and no one N suits both. The schedule spaces the samples by
// what they cost instead: each sampled step's time above a typical step's is paid for by a
// budget, a fixed share of the time the other watch steps take, so that watch's samples cost at
// most `budget` of the run on any model. The samples stay at least `every` steps apart (the
// rules that read layer outputs judge windows of steps, not of samples) and at most `every_max`
// (a model whose samples cost many steps still gets its layer outputs looked at).
//
// The first step samples (a NaN-free start is what the later samples are judged against), and so
// does the first step `every` steps after it, which measures what a sample costs; the first step
// is not measured (it warms the allocator and the rules' state). A sample's cost is the median of
// the last three measured (one slow step of the machine does not stretch the spacing), and a
// typical step a moving average of the steps between. Diagnose steps and replayed steps are
// neither sampled here nor timed. With budget 0 the schedule is the fixed one: the steps where
// step % every == 0.
class WatchSchedule {
 public:
  struct Settings {
    std::int64_t every = 10;
    std::int64_t every_max = 50;
    double budget = 0.01;
  };
  explicit WatchSchedule(Settings settings) : settings_(settings) {}

  // Whether the watch step `step` samples.
  bool due(std::int64_t step) const;
  // The watch step `step`, sampled or not, took `seconds` from its start to its end.
  void ended(std::int64_t step, bool sampled, double seconds);

  std::int64_t samples() const { return samples_; }
  // What one sample costs above a typical step, in seconds (0 until one is measured), and what
  // a typical step between samples takes.
  double sample_cost() const;
  double step_time() const { return step_seconds_; }

 private:
  Settings settings_;
  std::int64_t samples_ = 0;
  std::int64_t last_ = 0;          // the last sampled step
  std::int64_t steps_timed_ = 0;   // steps between samples, timed
  double step_seconds_ = 0;        // their moving average
  double credit_ = 0;              // budget saved since the last sample, in seconds
  std::array<double, 3> costs_{};  // the last measured samples' cost
  std::int64_t costs_measured_ = 0;
};

}  // namespace tfdebug::torch::detail
