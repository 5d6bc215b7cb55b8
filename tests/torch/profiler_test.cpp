// tfdebug::torch::Profiler on the demo model: FLOPs of the linear layers against hand-computed
// values, modules and phases of ops, the memory report, and the trace's nesting.
#include "tfdebug/torch/profiler.hpp"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "demo_model.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/profile/flops.hpp"
#include "tfdebug/session/session.hpp"
#include "tfdebug/torch/anomaly_window.hpp"
#include "tfdebug/torch/attach.hpp"

namespace tfdebug::torch {
namespace {

bool is_matrix_product(const std::string& op) {
  return op == "aten::mm" || op == "aten::addmm" || op == "aten::bmm" || op == "aten::matmul" ||
         op == "aten::linear" || op == "aten::baddbmm";
}

struct Profiled {
  profile::OpProfile profile;
  demo::DemoConfig config;
};

const Profiled& profiled() {
  static const Profiled* result = [] {
    auto* r = new Profiled();
    r->config.steps = 5;
    demo::DemoTrainer trainer(r->config);
    trainer.train_step();  // warm-up: Adam's state is allocated in the first step
    Profiler profiler(trainer.model());
    for (std::int64_t step = 1; step <= 3; ++step) {
      profiler.step_begin(step);
      trainer.train_step();
      profiler.step_end(step);
    }
    r->profile = profiler.stop();
    return r;
  }();
  return *result;
}

// Matrix-product FLOPs per step of `module` in `phase`.
double matmul_flops(const profile::OpProfile& p, const std::string& module, const std::string& phase) {
  double sum = 0;
  for (const auto& row : p.ops)
    if (row.module == module && phase_name(row.phase) == phase && is_matrix_product(row.op)) sum += row.flops;
  return sum / 3;
}

TEST(Profiler, LinearLayerFlopsMatchHandComputedValues) {
  const auto& p = profiled().profile;
  // 32 sequences of 16 tokens = 512 rows; d_model 32, d_ff 64, vocab 16.
  // q, k, v, o: 2 * 512 * 32 * 32 = 1048576; fc1 and fc2: 2 * 512 * 32 * 64 = 2097152;
  // head: 2 * 512 * 32 * 16 = 524288.
  for (const char* block : {"blocks.0", "blocks.1"}) {
    for (const char* proj : {".attn.q", ".attn.k", ".attn.v", ".attn.o"})
      EXPECT_EQ(matmul_flops(p, std::string(block) + proj, "forward"), 1048576.0) << block << proj;
    EXPECT_EQ(matmul_flops(p, std::string(block) + ".mlp.fc1", "forward"), 2097152.0);
    EXPECT_EQ(matmul_flops(p, std::string(block) + ".mlp.fc2", "forward"), 2097152.0);
  }
  EXPECT_EQ(matmul_flops(p, "head", "forward"), 524288.0);
  // The attention's own products run in blocks.N.attn: scores [32,4,16,8] x [32,4,8,16] and the
  // mix [32,4,16,16] x [32,4,16,8], each 2 * 128 * 16 * 16 * 8 = 524288.
  EXPECT_EQ(matmul_flops(p, "blocks.0.attn", "forward"), 2 * 524288.0);
  // Backward: the input gradient and the weight gradient, each as many FLOPs as the forward.
  EXPECT_EQ(matmul_flops(p, "blocks.0.mlp.fc1", "backward"), 2 * 2097152.0);
  EXPECT_EQ(matmul_flops(p, "head", "backward"), 2 * 524288.0);
}

TEST(Profiler, EveryStepEveryPhaseIsSeen) {
  const auto& p = profiled().profile;
  EXPECT_EQ(p.step_ns.size(), 3u);
  std::set<std::string> phases;
  for (const auto& row : p.ops) phases.insert(std::string(phase_name(row.phase)));
  EXPECT_EQ(phases, (std::set<std::string>{"forward", "backward", "optimizer"}));
  // Adam updates each of the model's 38 parameter tensors (2 embeddings, 16 per block, ln_f and
  // head 2 each) with one addcdiv_ per step.
  std::uint64_t addcdiv = 0;
  for (const auto& row : p.ops)
    if (row.op == "aten::addcdiv_" && row.phase == Phase::optimizer) addcdiv += row.calls;
  EXPECT_EQ(addcdiv, 3u * 38u);
  // Self times add up to no more than inclusive times, per row.
  for (const auto& row : p.ops) EXPECT_LE(row.self_ns, row.total_ns) << row.op;
  // Per-op series: one value per step.
  for (const auto& s : p.series) EXPECT_EQ(s.step_self_ns.size(), 3u) << s.op;
}

TEST(Profiler, ModulesIncludeTheirSubmodules) {
  const auto& p = profiled().profile;
  std::map<std::string, profile::ModuleStats> modules;
  for (const auto& m : p.modules) modules[m.module] = m;
  ASSERT_TRUE(modules.count("blocks.0.mlp") && modules.count("blocks.0.mlp.fc1") &&
              modules.count("blocks.0.mlp.fc2"));
  const auto& mlp = modules["blocks.0.mlp"];
  EXPECT_EQ(mlp.total_ns,
            mlp.self_ns + modules["blocks.0.mlp.fc1"].total_ns + modules["blocks.0.mlp.fc2"].total_ns);
  EXPECT_EQ(modules[""].total_flops, p.total_flops());
}

TEST(Profiler, UncountedOpsAreListedNotZero) {
  const auto& p = profiled().profile;
  for (const auto& u : p.uncounted) {
    EXPECT_FALSE(profile::has_flops_formula(u.op)) << u.op;
    EXPECT_GT(u.calls, 0u);
  }
}

TEST(Profiler, MemoryPeakAndTimeline) {
  const auto& m = profiled().profile.memory;
  ASSERT_TRUE(m.reported) << "c10's CPU allocator did not report to the profiler";
  EXPECT_GT(m.peak_bytes, 0);
  EXPECT_GT(m.allocations, 0u);
  EXPECT_GE(m.peak_step, 1);
  EXPECT_FALSE(m.peak_op.empty());
  EXPECT_FALSE(m.timeline.empty());
  EXPECT_EQ(m.rss_bytes.size(), 3u);
  for (auto rss : m.rss_bytes) EXPECT_GT(rss, 0);
  // Every allocation of a step is freed by its end once Adam's state exists: nothing alive.
  std::int64_t alive = 0;
  for (const auto& a : m.alive_at_step_end) alive += a.bytes;
  EXPECT_EQ(alive, 0);
}

TEST(Profiler, TraceNestsStepsPhasesModulesAndOps) {
  const auto& p = profiled().profile;
  ASSERT_FALSE(p.trace.threads.empty());
  const auto summary = profile::summarize(p.trace);
  std::map<std::string, profile::FrameTotal> frames;
  for (const auto& f : summary.frames) frames[f.name] = f;
  EXPECT_EQ(frames["step"].calls, 3u);
  EXPECT_GT(frames["aten::mm"].calls, 0u);
  EXPECT_GT(frames["blocks.0.mlp.fc1"].calls, 0u);
  EXPECT_EQ(frames["forward"].calls, 3u);
  EXPECT_EQ(p.trace_evicted, 0u);
}

TEST(Profiler, OneAtATime) {
  demo::DemoConfig config;
  demo::DemoTrainer trainer(config);
  Profiler first(trainer.model());
  EXPECT_THROW(Profiler second(trainer.model()), Error);
  (void)first.stop();
  EXPECT_THROW((void)first.stop(), Error);
}

// ---- Step window (Note [Step window] in src/torch/profiler.cpp) ----------------------------------

// The names of the step slices, the instant events and the event count of a trace.
struct WindowTrace {
  std::vector<std::string> steps;     // "step <n>" slices, in order, on any thread
  std::vector<std::string> instants;  // instant event names
  std::size_t max_thread_events = 0;
};

WindowTrace read_window(const profile::Trace& trace) {
  WindowTrace w;
  for (const auto& thread : trace.threads) {
    w.max_thread_events = std::max(w.max_thread_events, thread.events.size());
    for (const auto& slice : profile::slices(thread)) {
      const auto& name = trace.names[slice.name];
      if (name.rfind("step", 0) == 0) w.steps.push_back(name);
    }
    for (const auto& e : thread.events)
      if (e.kind == profile::EventKind::kInstant) w.instants.push_back(trace.names[e.name]);
  }
  return w;
}

// Every end closes the slice its thread opened last, with the same name.
void expect_nested(const profile::Trace& trace) {
  for (const auto& thread : trace.threads) {
    std::vector<std::uint32_t> open;
    for (const auto& e : thread.events) {
      if (e.kind == profile::EventKind::kBegin) open.push_back(e.name);
      if (e.kind != profile::EventKind::kEnd) continue;
      ASSERT_FALSE(open.empty()) << thread.name << ": end of " << trace.names[e.name] << " with nothing open";
      ASSERT_EQ(trace.names[open.back()], trace.names[e.name]) << thread.name;
      open.pop_back();
    }
    EXPECT_TRUE(open.empty()) << thread.name << ": " << open.size() << " slices left open";
  }
}

TEST(ProfilerWindow, KeepsTheStepsAroundAMarkedAnomaly) {
  demo::DemoConfig config;
  demo::DemoTrainer trainer(config);
  trainer.train_step();
  ProfilerOptions options;
  options.keep_steps_before = 2;
  options.keep_steps_after = 1;
  options.trace_events = std::size_t{1} << 18;  // room for the window (about 30,000 events a step)
  Profiler profiler(trainer.model(), options);
  for (std::int64_t step = 0; step < 10; ++step) {
    profiler.step_begin(step);
    trainer.train_step();
    if (step == 5) {
      EXPECT_TRUE(profiler.mark_anomaly(5, "planted in blocks.1.mlp aten::log"));
    }
    if (step == 6) {
      EXPECT_FALSE(profiler.mark_anomaly(6, "a second one"));  // the first one counts
    }
    profiler.step_end(step);
  }
  const auto p = profiler.stop();
  const auto w = read_window(p.trace);
  EXPECT_EQ(w.steps, (std::vector<std::string>{"step 3", "step 4", "step 5", "step 6"}));
  EXPECT_EQ(w.instants, (std::vector<std::string>{"tfdebug: planted in blocks.1.mlp aten::log"}));
  EXPECT_TRUE(p.window.enabled);
  EXPECT_EQ(p.window.first_step, 3);
  EXPECT_EQ(p.window.last_step, 6);
  EXPECT_EQ(p.window.anomaly_step, 5);
  EXPECT_EQ(p.window.anomaly, "planted in blocks.1.mlp aten::log");
  EXPECT_EQ(p.trace.process_name,
            "tfdebug torch profile: steps 3-6 around step 5 (planted in blocks.1.mlp aten::log)");
  EXPECT_LE(w.max_thread_events, options.trace_events);
  EXPECT_GT(p.trace_evicted, 0u);  // steps 0-2 were recorded and discarded; 7-9 never recorded
  expect_nested(p.trace);
  // The aggregates go on past the window: all ten steps are timed and counted.
  EXPECT_EQ(p.step_ns.size(), 10u);
  std::uint64_t addcdiv = 0;
  for (const auto& row : p.ops)
    if (row.op == "aten::addcdiv_") addcdiv += row.calls;
  EXPECT_EQ(addcdiv, 10u * 38u);
}

TEST(ProfilerWindow, WithoutAnAnomalyKeepsTheLastSteps) {
  demo::DemoConfig config;
  demo::DemoTrainer trainer(config);
  ProfilerOptions options;
  options.keep_steps_before = 2;
  Profiler profiler(trainer.model(), options);
  for (std::int64_t step = 0; step < 6; ++step) {
    profiler.step_begin(step);
    trainer.train_step();
    profiler.step_end(step);
  }
  const auto p = profiler.stop();
  EXPECT_EQ(read_window(p.trace).steps, (std::vector<std::string>{"step 4", "step 5"}));
  EXPECT_EQ(p.window.anomaly_step, -1);
  EXPECT_EQ(p.trace.process_name, "tfdebug torch profile: steps 4-5");
  expect_nested(p.trace);
}

TEST(ProfilerWindow, AStepThatNoLongerFitsInTheRingIsDroppedWhole) {
  demo::DemoConfig config;
  demo::DemoTrainer trainer(config);
  trainer.train_step();
  // Measure one step's events on the main thread, then give the ring room for 1.5 steps.
  std::size_t per_step = 0;
  {
    Profiler probe(trainer.model(), ProfilerOptions{.keep_steps_before = 1});
    probe.step_begin(0);
    trainer.train_step();
    probe.step_end(0);
    for (const auto& thread : probe.stop().trace.threads) per_step = std::max(per_step, thread.events.size());
  }
  ASSERT_GT(per_step, 100u);
  ProfilerOptions options;
  options.keep_steps_before = 3;
  options.trace_events = per_step * 3 / 2;
  Profiler profiler(trainer.model(), options);
  for (std::int64_t step = 0; step < 6; ++step) {
    profiler.step_begin(step);
    trainer.train_step();
    if (step == 4) profiler.mark_anomaly(4, "planted");
    profiler.step_end(step);
  }
  const auto p = profiler.stop();
  // Steps 1-4 are the window; only step 4 is still whole in the ring (step 5 was not recorded).
  const auto w = read_window(p.trace);
  EXPECT_EQ(w.steps, (std::vector<std::string>{"step 4"}));
  EXPECT_EQ(p.window.first_step, 4);
  EXPECT_EQ(p.window.last_step, 4);
  EXPECT_LE(w.max_thread_events, options.trace_events);
  expect_nested(p.trace);
}

TEST(ProfilerWindow, BadOptionsAndNoWindow) {
  demo::DemoConfig config;
  demo::DemoTrainer trainer(config);
  EXPECT_THROW(Profiler(trainer.model(), ProfilerOptions{.keep_steps_after = 2}), Error);
  EXPECT_THROW(Profiler(trainer.model(), ProfilerOptions{.keep_steps_before = -1}), Error);
  Profiler plain(trainer.model());
  EXPECT_FALSE(plain.mark_anomaly(0, "no window"));  // the plain ring has no steps to keep
  (void)plain.stop();
}

// The Session and the profiler together: the adapter intercepts ops in the dispatcher (Note
// [Interception] in src/torch/attach.cpp) and hides nothing from the profiler's RecordFunction
// callback, which still sees every op at every depth; the AnomalyWindowSink marks the Session's
// first error.
TEST(ProfilerWindow, WithTheSessionKeepsTheStepsAroundTheFirstError) {
  demo::DemoConfig config;
  config.fault = demo::Fault::log;
  config.steps = 90;
  demo::DemoTrainer trainer(config);
  RunConfig run;
  run.tier = Tier::diagnose;  // the adapter observes every op (watch observes only some)
  Session session(run);
  ProfilerOptions options;
  options.keep_steps_before = 3;
  options.keep_steps_after = 1;
  options.trace_events = 400000;  // 5 steps of ~15,000 ops, each a begin and an end
  profile::OpProfile p;
  {
    auto debug = attach(session, trainer.model());
    debug.step_begin(0);
    debug.step_end(0, trainer.train_step());
    auto profiler = std::make_shared<Profiler>(trainer.model(), options);
    session.add_sink(std::make_shared<AnomalyWindowSink>(profiler));
    for (std::int64_t step = 1; step < config.steps; ++step) {
      debug.step_begin(step);
      profiler->step_begin(step);
      const double loss = trainer.train_step();
      profiler->step_end(step);  // before the Session's end-of-step work, which is not the model's
      debug.step_end(step, loss);
    }
    p = profiler->stop();
  }
  const auto summary = session.finish();
  const Finding* first_error = nullptr;
  for (const auto& f : summary.findings)
    if (f.severity == Severity::error && (first_error == nullptr || f.step < first_error->step))
      first_error = &f;
  ASSERT_NE(first_error, nullptr) << "the log fault should be found within " << config.steps << " steps";
  const auto s = first_error->step;
  ASSERT_GE(s, 4);
  ASSERT_LE(s + 1, config.steps - 1);
  const auto w = read_window(p.trace);
  std::vector<std::string> expected;
  for (auto step = s - 3; step <= s + 1; ++step) expected.push_back("step " + std::to_string(step));
  EXPECT_EQ(w.steps, expected);
  ASSERT_EQ(w.instants.size(), 1u);
  EXPECT_EQ(w.instants[0], "tfdebug: " + AnomalyWindowSink::describe(*first_error));
  EXPECT_EQ(p.window.anomaly_step, s);
  EXPECT_LE(w.max_thread_events, options.trace_events);
  expect_nested(p.trace);
  for (const auto& row : p.ops) {
    EXPECT_GE(row.self_ns, 0) << row.op;
    EXPECT_LE(row.self_ns, row.total_ns) << row.op;
  }
  // Forward: the demo's Linear layers call aten::matmul (then add_ the bias), which has inner ops
  // (view, mm, _unsafe_view; bmm for the attention's 4-d products). The adapter observes matmul
  // without hiding its inner ops from other observers: the profiler sees them inside it.
  std::uint64_t matmul_calls = 0;
  bool forward_mm = false;
  bool forward_bmm = false;
  for (const auto& row : p.ops) {
    if (row.phase != Phase::forward) continue;
    forward_mm = forward_mm || row.op == "aten::mm";
    forward_bmm = forward_bmm || row.op == "aten::bmm";
    if (row.op == "aten::matmul") {
      matmul_calls += row.calls;
      EXPECT_LT(row.self_ns, row.total_ns) << row.module;
    }
  }
  EXPECT_TRUE(forward_mm);
  EXPECT_TRUE(forward_bmm);
  EXPECT_EQ(matmul_calls, 89u * 17u);
}

}  // namespace
}  // namespace tfdebug::torch
