// The pause channel (Note [Pause channel] in src/session/session.cpp) through the Probe: a sink
// that pauses at the first NaN stops the training thread inside the op's observe call, with the
// op's output and inputs readable from another thread, until it lets the thread go.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

#include "session_test_util.hpp"
#include "tfdebug/session/probe.hpp"

namespace tfdebug {
namespace {

// Pauses at the first observation holding a NaN or Inf; while paused, publishes the point and
// waits for resume().
class FirstNonfiniteBreakpoint : public Sink {
 public:
  Delivery delivery() const noexcept override { return Delivery::synchronous; }
  void on_finding(const Finding&) override {}
  void on_run_end(const RunSummary&) override {}
  bool wants_pauses() const noexcept override { return true; }
  bool pause_at(const Observation&, const Stats& stats, std::span<const Finding> raised) override {
    ++asked;
    if (hit || stats.nonfinite() == 0) return false;
    hit = true;
    for (const Finding& f : raised) raised_rules.push_back(f.rule);
    return true;
  }
  void on_pause(const PausePoint& point) override {
    std::unique_lock lock(mutex);
    paused = &point;
    changed.notify_all();
    changed.wait(lock, [&] { return resumed; });
    paused = nullptr;
  }
  // From the test's thread.
  const PausePoint* wait_paused() {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return paused != nullptr; });
    return paused;
  }
  void resume() {
    const std::lock_guard lock(mutex);
    resumed = true;
    changed.notify_all();
  }

  std::atomic<int> asked{0};
  bool hit = false;
  std::vector<std::string> raised_rules;

 private:
  std::mutex mutex;
  std::condition_variable changed;
  const PausePoint* paused = nullptr;
  bool resumed = false;
};

TEST(Pause, AtTheFirstNaNTheTrainingThreadWaitsWithTheOpsInputsReadable) {
  Session session(testing::quiet_config());
  auto breakpoint = std::make_shared<FirstNonfiniteBreakpoint>();
  session.add_sink(breakpoint);
  std::atomic<int> steps_done{0};
  std::thread training([&] {
    Probe probe(session);
    for (std::int64_t step = 0; step < 5; ++step) {
      // log(x): x goes negative at step 2.
      std::vector<float> x = {1.0f, 2.0f, step == 2 ? -1.0f : 3.0f, 4.0f};
      std::vector<float> y(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) y[i] = std::log(x[i]);
      probe.begin_step(step);
      probe.observe("mlp.log", Phase::forward, TensorView(y.data(), DType::f32, {2, 2}),
                    {TensorView(x.data(), DType::f32, {2, 2})});
      probe.end_step(1.0);
      ++steps_done;
    }
  });
  const PausePoint* point = breakpoint->wait_paused();
  // Paused inside step 2's observe: steps 0 and 1 are done, step 2 is not, and stays so.
  EXPECT_EQ(steps_done.load(), 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(steps_done.load(), 2);
  // The op, its output and its inputs, read from this thread while the training thread waits.
  EXPECT_EQ(point->observation().step, 2);
  EXPECT_EQ(point->observation().module, "mlp");
  EXPECT_EQ(point->observation().op, "log");
  EXPECT_EQ(compute_stats(point->observation().value).nan, 1);
  ASSERT_EQ(point->inputs().size(), 1u);
  const Stats input = compute_stats(point->inputs()[0]);
  EXPECT_EQ(input.min, -1.0);
  EXPECT_EQ(input.nonfinite(), 0);
  breakpoint->resume();
  training.join();
  EXPECT_EQ(steps_done.load(), 5);
  // The rules had run when it was asked: the op is named the producer.
  EXPECT_EQ(breakpoint->raised_rules, std::vector<std::string>{"nonfinite"});
  EXPECT_EQ(breakpoint->asked.load(), 5);  // every observation was offered, one paused
  const auto nonfinite = testing::with_rule(session.finish().findings, "nonfinite");
  ASSERT_EQ(nonfinite.size(), 1u);
  EXPECT_EQ(nonfinite[0].step, 2);
  EXPECT_EQ(nonfinite[0].evidence_value("producer"), 1.0);
}

TEST(Pause, WithoutAPausingSinkNoObservationAsksToPause) {
  Session session(testing::quiet_config());
  session.begin_step(0);
  const std::vector<float> bad = {1.0f, std::numeric_limits<float>::quiet_NaN()};
  EXPECT_FALSE(session.observe(testing::output(0, "m", "aten::log", bad, {}, true)).pause);
  session.end_step(0, std::nullopt);
}

}  // namespace
}  // namespace tfdebug
