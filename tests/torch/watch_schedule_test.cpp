// Note [Watch budget]: which watch steps sample, from the time the steps took. Times here are
// powers of two so that the budget's sums are exact.
#include "watch_schedule.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

namespace {

using tfdebug::torch::detail::WatchSchedule;

constexpr double kStep = 1.0 / 1024;  // a step between samples: ~1 ms

// Runs `steps` steps from `first`; a sampled step takes kStep + extra(step). The sampled steps.
std::vector<std::int64_t> run(WatchSchedule& schedule, std::int64_t first, std::int64_t steps,
                              const std::function<double(std::int64_t)>& extra) {
  std::vector<std::int64_t> sampled;
  for (std::int64_t step = first; step < first + steps; ++step) {
    const bool due = schedule.due(step);
    if (due) sampled.push_back(step);
    schedule.ended(step, due, kStep + (due ? extra(step) : 0.0));
  }
  return sampled;
}

TEST(WatchSchedule, WithoutABudgetSamplesEveryNthStep) {
  WatchSchedule schedule({.every = 10, .every_max = 50, .budget = 0});
  const auto sampled = run(schedule, 0, 45, [](std::int64_t) { return 100 * kStep; });
  EXPECT_EQ(sampled, (std::vector<std::int64_t>{0, 10, 20, 30, 40}));
  WatchSchedule resumed({.every = 10, .every_max = 50, .budget = 0});
  EXPECT_EQ(run(resumed, 1234, 20, [](std::int64_t) { return 0.0; }),
            (std::vector<std::int64_t>{1240, 1250}));
}

// A sample that costs 4 steps, on a budget of 1/64 of the time: 256 steps pay for one.
TEST(WatchSchedule, SpacesCostlySamplesByTheBudget) {
  WatchSchedule schedule({.every = 10, .every_max = 1000, .budget = 1.0 / 64});
  const auto sampled = run(schedule, 0, 800, [](std::int64_t) { return 4 * kStep; });
  // The first step, the one `every` steps later that measures a sample, then one each time the
  // 256 steps between have saved 4 steps' time.
  EXPECT_EQ(sampled, (std::vector<std::int64_t>{0, 10, 267, 524, 781}));
  EXPECT_DOUBLE_EQ(schedule.sample_cost(), 4 * kStep);
  EXPECT_DOUBLE_EQ(schedule.step_time(), kStep);
}

// Samples that cost less than the budget pays for come every `every` steps, no closer.
TEST(WatchSchedule, CheapSamplesComeEveryNSteps) {
  WatchSchedule schedule({.every = 10, .every_max = 50, .budget = 1.0 / 64});
  const auto sampled = run(schedule, 0, 41, [](std::int64_t) { return kStep / 16; });
  EXPECT_EQ(sampled, (std::vector<std::int64_t>{0, 10, 20, 30, 40}));
}

// However much a sample costs, one comes every every_max steps.
TEST(WatchSchedule, SamplesAtLeastEveryMaxSteps) {
  WatchSchedule schedule({.every = 10, .every_max = 50, .budget = 1.0 / 64});
  const auto sampled = run(schedule, 0, 200, [](std::int64_t) { return 1000 * kStep; });
  EXPECT_EQ(sampled, (std::vector<std::int64_t>{0, 10, 60, 110, 160}));
}

// The first step warms up and is no measure; after that, the median of the last three samples'
// costs, so one slow step of the machine does not stretch the spacing.
TEST(WatchSchedule, OneSlowSampleDoesNotStretchTheSpacing) {
  WatchSchedule schedule({.every = 10, .every_max = 10'000, .budget = 1.0 / 64});
  const auto sampled = run(schedule, 0, 1200, [](std::int64_t step) {
    if (step == 0) return 500 * kStep;  // the first step: not measured
    return step == 397 ? 400 * kStep : 2 * kStep;
  });
  // 2-step samples every 128 steps; the one slow sample (at 397) is outvoted by the two before.
  EXPECT_EQ(sampled, (std::vector<std::int64_t>{0, 10, 139, 268, 397, 526, 655, 784, 913, 1042, 1171}));
  EXPECT_DOUBLE_EQ(schedule.sample_cost(), 2 * kStep);
}

// Over a long run the samples cost at most the budget of the other steps' time.
TEST(WatchSchedule, SamplesCostAtMostTheBudget) {
  for (const double extra : {0.5, 3.0, 17.0}) {
    WatchSchedule schedule({.every = 10, .every_max = 100'000, .budget = 0.01});
    double sampled_cost = 0;
    double other = 0;
    for (std::int64_t step = 0; step < 200'000; ++step) {
      const bool due = schedule.due(step);
      if (due && step > 0) sampled_cost += extra * kStep;
      if (!due) other += kStep;
      schedule.ended(step, due, kStep + (due ? extra * kStep : 0.0));
    }
    EXPECT_LE(sampled_cost, 0.01 * other + extra * kStep) << extra;  // the sample that measures one
    EXPECT_GE(sampled_cost, 0.9 * std::min(0.01 * other, extra * kStep * 200'000 / 10)) << extra;
  }
}

// A loop that numbers its steps afresh samples its first step again.
TEST(WatchSchedule, StepsNumberedAfreshSampleAtOnce) {
  WatchSchedule schedule({.every = 10, .every_max = 1000, .budget = 1.0 / 64});
  run(schedule, 0, 100, [](std::int64_t) { return 4 * kStep; });
  EXPECT_TRUE(schedule.due(0));
}

}  // namespace
