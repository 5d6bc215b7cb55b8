// Queued and synchronous sinks (Note [Sink delivery] in src/session/sink_queue.cpp): a sink that
// blocks or sleeps costs the training thread nothing, a full queue drops and counts, finish()
// delivers what is queued and gives up on a sink that never returns.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "session_test_util.hpp"
#include "tfdebug/session/probe.hpp"

namespace tfdebug {
namespace {

// A gate that a sink waits at until the test opens it.
class Gate {
 public:
  void open() {
    const std::lock_guard lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }
  void wait() {
    std::unique_lock lock(mutex_);
    ++waiting_;
    changed_.notify_all();
    changed_.wait(lock, [&] { return open_; });
  }
  // Blocks until someone waits at the gate.
  void await_waiter() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return waiting_ > 0; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool open_ = false;
  int waiting_ = 0;
};

// Records the steps of the metrics it gets; waits at the gate (if any) in on_step and, for the
// stuck-at-the-end case, in on_run_end.
class GatedSink : public Sink {
 public:
  // The gates are shared with the sink: a thread left waiting in it keeps them alive.
  GatedSink(std::shared_ptr<Gate> step_gate, std::shared_ptr<Gate> end_gate)
      : step_gate_(std::move(step_gate)), end_gate_(std::move(end_gate)) {}
  void on_finding(const Finding&) override {}
  void on_step(const StepMetrics& m) override {
    if (step_gate_ != nullptr) step_gate_->wait();
    const std::lock_guard lock(mutex);
    steps.push_back(m.step);
  }
  void on_run_end(const RunSummary&) override {
    if (end_gate_ != nullptr) end_gate_->wait();
    const std::lock_guard lock(mutex);
    ended = true;
  }
  bool wants_step_metrics() const noexcept override { return true; }

  std::mutex mutex;
  std::vector<std::int64_t> steps;
  bool ended = false;

 private:
  std::shared_ptr<Gate> step_gate_;
  std::shared_ptr<Gate> end_gate_;
};

class SleepingSink : public GatedSink {
 public:
  SleepingSink() : GatedSink(nullptr, nullptr) {}
  void on_step(const StepMetrics& m) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    GatedSink::on_step(m);
  }
};

std::vector<float> values = {0.5f, -0.25f, 1.0f, 2.0f};

void step(Session& session, std::int64_t s) {
  Probe probe(session);
  probe.begin_step(s);
  probe.observe("layer.relu", Phase::forward, TensorView(values.data(), DType::f32, {2, 2}));
  probe.end_step(1.0);
}

TEST(SinkDelivery, AStuckSinkDoesNotStopTrainingAndItsDropsAreCounted) {
  RunConfig config = testing::quiet_config();
  config.sink_queue = 8;
  Session session(config);
  auto gate = std::make_shared<Gate>();
  auto sink = std::make_shared<GatedSink>(gate, nullptr);
  session.add_sink(sink);
  step(session, 0);
  gate->await_waiter();  // the sink's thread is inside on_step(0), and stays there
  for (std::int64_t s = 1; s < 200; ++s) step(session, s);
  // All 200 steps ran while the sink was blocked in its first event: it has taken none yet.
  {
    const std::lock_guard lock(sink->mutex);
    EXPECT_TRUE(sink->steps.empty());
  }
  gate->open();
  const RunSummary summary = session.finish();
  // Step 0 was being delivered, steps 1-8 filled the queue, 9-199 were dropped.
  const std::lock_guard lock(sink->mutex);
  EXPECT_EQ(sink->steps, (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_TRUE(sink->ended);
  EXPECT_EQ(summary.dropped_sink_events, 191);
  ASSERT_EQ(summary.hook_errors.size(), 1u);
  EXPECT_NE(summary.hook_errors[0].find("tfdebug::(anonymous namespace)::GatedSink: dropped 191 events"),
            std::string::npos)
      << summary.hook_errors[0];
}

TEST(SinkDelivery, ASleepingSinkGetsEveryEventInOrderByTheEndOfTheRun) {
  Session session(testing::quiet_config());
  auto sink = std::make_shared<SleepingSink>();
  session.add_sink(sink);
  for (std::int64_t s = 0; s < 40; ++s) step(session, s);
  const RunSummary summary = session.finish();
  std::vector<std::int64_t> expected(40);
  for (std::int64_t s = 0; s < 40; ++s) expected[std::size_t(s)] = s;
  const std::lock_guard lock(sink->mutex);
  EXPECT_EQ(sink->steps, expected);
  EXPECT_TRUE(sink->ended);
  EXPECT_EQ(summary.dropped_sink_events, 0);
  EXPECT_TRUE(summary.hook_errors.empty());
}

TEST(SinkDelivery, FinishGivesUpOnASinkThatNeverReturnsFromRunEnd) {
  RunConfig config = testing::quiet_config();
  config.sink_finish_timeout_s = 0.2;
  auto end_gate = std::make_shared<Gate>();
  {
    Session session(config);
    session.add_sink(std::make_shared<GatedSink>(nullptr, end_gate));
    step(session, 0);
    try {
      session.finish();
      ADD_FAILURE() << "finish returned while the sink was stuck";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("did not finish its run within 0.2"), std::string::npos)
          << e.what();
    }
  }  // the Session is gone; the sink's thread still waits, holding the sink
  end_gate->open();
}

class Counting : public Sink {
 public:
  explicit Counting(Delivery d) : delivery_(d) {}
  Delivery delivery() const noexcept override { return delivery_; }
  void on_finding(const Finding&) override { ++findings; }
  void on_run_end(const RunSummary&) override {}
  std::atomic<int> findings{0};

 private:
  Delivery delivery_;
};

TEST(SinkDelivery, ASynchronousSinkHasTheFindingWhenObserveReturns) {
  Session session(testing::quiet_config());
  auto sync = std::make_shared<Counting>(Delivery::synchronous);
  session.add_sink(sync);
  session.begin_step(0);
  const std::vector<float> bad = {1.0f, std::numeric_limits<float>::quiet_NaN()};
  session.observe(testing::output(0, "m", "aten::log", bad, {}, true));
  EXPECT_EQ(sync->findings.load(), 1);
  session.end_step(0, std::nullopt);
  session.finish();
}

}  // namespace
}  // namespace tfdebug
