// The pause channel through the LibTorch adapter (Note [Pause channel] in
// src/session/session.cpp): on the demo model with the log fault, a sink that pauses at the first
// NaN's producer stops the training thread inside aten::log, with log's input, its output and the
// model's parameters readable from another thread, until it resumes.
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "demo_model.hpp"
#include "tfdebug/core/stats.hpp"
#include "tfdebug/session/session.hpp"
#include "tfdebug/torch/attach.hpp"

namespace {

using namespace tfdebug;

struct PausedFacts {
  std::int64_t step = -1;
  Phase phase = Phase::backward;
  std::string module, op;
  std::int64_t output_nan = 0;
  double input_min = 0;
  std::size_t inputs = 0;
  std::vector<std::string> names;
  std::vector<std::int64_t> weight_shape;
  double weight_l2 = 0;
  bool gradient_found = false;
};

// Pauses where the rule nonfinite names a producer for the first time.
class ProducerBreakpoint : public Sink {
 public:
  Delivery delivery() const noexcept override { return Delivery::synchronous; }
  void on_finding(const Finding&) override {}
  void on_run_end(const RunSummary&) override {}
  bool wants_pauses() const noexcept override { return true; }
  bool pause_at(const Observation&, const Stats&, std::span<const Finding> raised) override {
    if (hit) return false;
    hit = std::any_of(raised.begin(), raised.end(), [](const Finding& f) {
      return f.rule == "nonfinite" && f.evidence_value("producer") == 1.0;
    });
    return hit;
  }
  void on_pause(const PausePoint& point) override {
    std::unique_lock lock(mutex_);
    paused_ = &point;
    changed_.notify_all();
    changed_.wait(lock, [&] { return resumed_; });
    paused_ = nullptr;
  }
  // On the test's thread: waits for the pause and reads the point.
  PausedFacts read_while_paused() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return paused_ != nullptr; });
    const PausePoint& p = *paused_;
    PausedFacts f;
    f.step = p.observation().step;
    f.phase = p.observation().phase;
    f.module = std::string(p.observation().module);
    f.op = std::string(p.observation().op);
    f.output_nan = compute_stats(p.observation().value).nan;
    f.inputs = p.inputs().size();
    f.input_min = 0;
    for (const TensorView& in : p.inputs()) f.input_min = std::min(f.input_min, compute_stats(in).min);
    f.names = p.tensor_names();
    if (auto w = p.tensor("blocks.1.mlp.fc1.weight")) {
      f.weight_shape.assign(w->shape().begin(), w->shape().end());
      f.weight_l2 = compute_stats(*w).l2;
    }
    f.gradient_found = p.tensor("blocks.1.mlp.fc1.weight.grad").has_value();
    return f;
  }
  void resume() {
    const std::lock_guard lock(mutex_);
    resumed_ = true;
    changed_.notify_all();
  }
  bool hit = false;

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  const PausePoint* paused_ = nullptr;
  bool resumed_ = false;
};

TEST(TorchPause, AtTheFirstNaNsProducerTheStepWaitsWithLogsInputReadable) {
  at::set_num_threads(1);
  demo::DemoConfig config;
  config.fault = demo::Fault::log;
  config.steps = 120;
  demo::DemoTrainer trainer(config);
  RunConfig run;
  run.tier = Tier::diagnose;
  Session session(run);
  auto breakpoint = std::make_shared<ProducerBreakpoint>();
  session.add_sink(breakpoint);
  std::atomic<std::int64_t> steps_done{0};
  std::thread training([&] {
    auto debug = tfdebug::torch::attach(session, trainer.model());
    for (std::int64_t step = 0; step < config.steps && !breakpoint->hit; ++step) {
      debug.step_begin(step);
      debug.step_end(step, trainer.train_step());
      ++steps_done;
    }
  });
  const PausedFacts f = breakpoint->read_while_paused();
  // Paused inside the step of the first NaN: that step has not ended, and does not while paused.
  EXPECT_EQ(steps_done.load(), f.step);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(steps_done.load(), f.step);
  EXPECT_EQ(f.op, "aten::log");
  EXPECT_EQ(f.phase, Phase::forward);
  EXPECT_EQ(f.module.rfind("blocks.1.mlp", 0), 0u) << f.module;
  EXPECT_GT(f.output_nan, 0);
  // log(2 + h) with 2 + h < 0 somewhere: the kept input shows the value out of log's domain.
  EXPECT_EQ(f.inputs, 1u);
  EXPECT_LT(f.input_min, 0.0);
  // The model's parameters are there by name, and their gradients once a backward ran.
  EXPECT_NE(std::find(f.names.begin(), f.names.end(), "blocks.1.mlp.fc1.weight"), f.names.end());
  EXPECT_EQ(f.weight_shape, (std::vector<std::int64_t>{64, 32}));
  EXPECT_GT(f.weight_l2, 0.0);
  EXPECT_TRUE(f.gradient_found);
  breakpoint->resume();
  training.join();
  EXPECT_EQ(steps_done.load(), f.step + 1);
  const RunSummary summary = session.finish();
  EXPECT_TRUE(summary.hook_errors.empty());
}

}  // namespace
