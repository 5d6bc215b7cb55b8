// The Debugger on the probe API: a hand-written training step of two modules (enc, dec) whose
// dec.log turns NaN at step 2, stopped at each kind of breakpoint and stepped through; what a
// stop shows (module stack, inputs, output, tensors by name) is read inside the handler.
#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <string>
#include <vector>

#include "tfdebug/ide/debugger.hpp"
#include "tfdebug/session/probe.hpp"
#include "tfdebug/session/session.hpp"

namespace tfdebug::ide {
namespace {

struct Seen {
  std::string reason;
  std::int64_t step;
  Phase phase;
  std::string module, op;
};

// Records every stop and answers from a script (then continue_run).
struct Script {
  std::deque<Resume> answers;
  std::vector<Seen> stops;
  std::function<void(const Stop&)> look;
  Debugger::Handler handler() {
    return [this](const Stop& stop) {
      stops.push_back({stop.reason().text, stop.step(), stop.phase(), stop.module(), stop.op()});
      if (look) look(stop);
      if (answers.empty()) return Resume::continue_run;
      const Resume r = answers.front();
      answers.pop_front();
      return r;
    };
  }
};

// Two modules forward, their backward, a parameter's gradient and update: 7 observations a step.
void run(Session& session, std::int64_t steps) {
  Probe probe(session);
  std::vector<float> weight = {0.5f, -0.25f, 2.0f, 1.0f};
  for (std::int64_t step = 0; step < steps; ++step) {
    probe.begin_step(step);
    std::vector<float> x = {1.0f, 2.0f, 3.0f, 4.0f};
    std::vector<float> h(4), y(4), g(4, 0.125f), u(4, -0.01f);
    for (std::size_t i = 0; i < 4; ++i) h[i] = weight[i] * x[i];
    for (std::size_t i = 0; i < 4; ++i) y[i] = std::log(step == 2 && i == 1 ? -h[i] - 1.0f : h[i] + 1.0f);
    const auto view = [](const std::vector<float>& v) { return TensorView(v.data(), DType::f32, {2, 2}); };
    probe.observe("enc.lin.mul", Phase::forward, view(h), {view(weight), view(x)});
    probe.observe("dec.log", Phase::forward, view(y), {view(h)});
    probe.observe("dec.grad_log", Phase::backward, view(g), {view(y)});
    probe.observe("enc.lin.grad_mul", Phase::backward, view(g), {view(g)});
    probe.observe_parameter("enc.lin.weight", view(weight));
    probe.observe_gradient("enc.lin.weight", view(g));
    probe.observe_update("enc.lin.weight", view(u));
    probe.end_step(1.0);
  }
}

std::shared_ptr<Debugger> attach_debugger(Session& session, Script& script) {
  auto debugger = std::make_shared<Debugger>(script.handler());
  session.add_sink(debugger);
  return debugger;
}

RunConfig config() {
  RunConfig c;
  c.tier = Tier::diagnose;
  return c;
}

TEST(Debugger, NanStopsAtTheProducerWithItsNegativeInputReadable) {
  Session session(config());
  Script script;
  double input_min = 0;
  std::int64_t output_nan = 0;
  std::vector<std::string> stack, names;
  script.look = [&](const Stop& stop) {
    input_min = compute_stats(*stop.tensor("input0")).min;
    output_nan = compute_stats(*stop.tensor("output")).nan;
    stack = stop.module_stack();
    names = stop.tensor_names();
    EXPECT_FALSE(stop.tensor("input1").has_value());
    EXPECT_FALSE(stop.tensor("nothing").has_value());
  };
  auto debugger = attach_debugger(session, script);
  debugger->add(parse_breakpoint("nan"));
  run(session, 5);
  // Only step 2's dec.log produced a NaN; dec.grad_log's inputs held it (a propagator).
  ASSERT_EQ(script.stops.size(), 1u);
  EXPECT_EQ(script.stops[0].step, 2);
  EXPECT_EQ(script.stops[0].module, "dec");
  EXPECT_EQ(script.stops[0].op, "log");
  EXPECT_EQ(script.stops[0].reason, "breakpoint 1: nan");
  EXPECT_EQ(input_min, -0.5);  // h = weight * x = [0.5, -0.5, 6, 4]; log(-h[1] - 1) = log(-0.5)
  EXPECT_EQ(output_nan, 1);
  EXPECT_EQ(stack, std::vector<std::string>{"dec"});
  EXPECT_EQ(names, (std::vector<std::string>{"output", "input0"}));
  EXPECT_EQ(debugger->breakpoints()[0].hits, 1);
  EXPECT_EQ(debugger->stops(), 1);
}

TEST(Debugger, OpGlobsCountHitsHonourIgnoreAndOnce) {
  Session session(config());
  Script script;
  auto debugger = attach_debugger(session, script);
  const int grads = debugger->add(parse_breakpoint("op grad_* ignore 3"));
  debugger->add(parse_breakpoint("op mul once"));
  run(session, 3);
  // mul once at step 0; grad_* hit 6 times (2 a step), the first 3 ignored.
  ASSERT_EQ(script.stops.size(), 4u);
  EXPECT_EQ(script.stops[0].op, "mul");
  EXPECT_EQ(script.stops[1].op, "grad_mul");
  EXPECT_EQ(script.stops[1].step, 1);
  EXPECT_EQ(script.stops[2].op, "grad_log");
  EXPECT_EQ(script.stops[3].op, "grad_mul");
  const std::vector<Breakpoint> left = debugger->breakpoints();
  ASSERT_EQ(left.size(), 1u);  // the one-shot is gone
  EXPECT_EQ(left[0].id, grads);
  EXPECT_EQ(left[0].hits, 6);
}

TEST(Debugger, ModuleEntryAndExitPerPhaseAndStepAndPhaseBreakpoints) {
  Session session(config());
  Script script;
  auto debugger = attach_debugger(session, script);
  debugger->add(parse_breakpoint("module enc backward"));
  debugger->add(parse_breakpoint("module dec exit forward"));
  debugger->add(parse_breakpoint("step 1"));
  debugger->add(parse_breakpoint("phase optimizer"));
  run(session, 2);
  std::vector<std::string> seen;
  for (const Seen& s : script.stops)
    seen.push_back(std::to_string(s.step) + " " + s.module + " " + s.op + " | " + s.reason);
  EXPECT_EQ(seen, (std::vector<std::string>{
                      // leaving dec (forward) is seen at the first op after it, dec.grad_log (backward)
                      "0 dec grad_log | breakpoint 2: module dec exit forward, left dec (forward)",
                      "0 enc.lin grad_mul | breakpoint 1: module enc backward, entered enc (backward)",
                      "0 enc.lin enc.lin.weight | breakpoint 4: phase optimizer",
                      "1 enc.lin mul | breakpoint 3: step 1",
                      "1 dec grad_log | breakpoint 2: module dec exit forward, left dec (forward)",
                      "1 enc.lin grad_mul | breakpoint 1: module enc backward, entered enc (backward)",
                      "1 enc.lin enc.lin.weight | breakpoint 4: phase optimizer",
                  }));
}

TEST(Debugger, SteppingByOpByModuleAndToTheEndOfTheStep) {
  Session session(config());
  Script script;
  script.answers = {Resume::next_op, Resume::next_module, Resume::next_module, Resume::finish_step,
                    Resume::detach};
  auto debugger = attach_debugger(session, script);
  debugger->add(parse_breakpoint("op mul"));
  run(session, 3);
  std::vector<std::string> seen;
  for (const Seen& s : script.stops)
    seen.push_back(std::to_string(s.step) + " " + s.module + " " + s.op + " | " + s.reason);
  EXPECT_EQ(seen, (std::vector<std::string>{
                      "0 enc.lin mul | breakpoint 1: op mul", "0 dec log | next op",
                      "0 enc.lin grad_mul | next module: enc.lin",  // dec.grad_log is still in dec
                      // parameters, gradients and updates are in no module's ops: the next is step 1's
                      "1 enc.lin mul | breakpoint 1: op mul",
                      "2 enc.lin mul | breakpoint 1: op mul",  // the breakpoint wins over "step 1 ended"
                  }));
  EXPECT_TRUE(debugger->detached());
  EXPECT_FALSE(debugger->aborted());
}

TEST(Debugger, FinishStepStopsAtTheNextStepsFirstOp) {
  Session session(config());
  Script script;
  script.answers = {Resume::finish_step, Resume::abort};
  auto debugger = attach_debugger(session, script);
  debugger->add(parse_breakpoint("op grad_log once"));
  run(session, 3);
  ASSERT_EQ(script.stops.size(), 2u);
  EXPECT_EQ(script.stops[1].reason, "step 0 ended");
  EXPECT_EQ(script.stops[1].step, 1);
  EXPECT_EQ(script.stops[1].op, "mul");
  EXPECT_TRUE(debugger->aborted());
}

TEST(Debugger, StatisticConditionsAndFindingsStop) {
  Session session(config());
  Script script;
  auto debugger = attach_debugger(session, script);
  // h = weight * x = [0.5, -0.5, 6, 4]: abs_max 6.
  debugger->add(parse_breakpoint("op mul if abs_max > 5.5"));
  debugger->add(parse_breakpoint("if std < 1e-6"));  // the constant gradients and updates
  debugger->add(parse_breakpoint("finding nonfinite"));
  run(session, 3);
  std::vector<std::string> seen;
  for (const Seen& s : script.stops) seen.push_back(std::to_string(s.step) + " " + s.op + " | " + s.reason);
  ASSERT_GE(seen.size(), 4u);
  EXPECT_EQ(seen[0], "0 mul | breakpoint 1: op mul if abs_max > 5.5");
  EXPECT_EQ(seen[1], "0 grad_log | breakpoint 2: any op if std < 1e-06");
  const auto nonfinite = std::find(seen.begin(), seen.end(), "2 log | breakpoint 3: finding nonfinite");
  EXPECT_NE(nonfinite, seen.end()) << ::testing::PrintToString(seen);
  EXPECT_EQ(debugger->breakpoints()[0].hits, 3);
  const std::vector<Finding> found = debugger->findings();
  EXPECT_TRUE(
      std::any_of(found.begin(), found.end(), [](const Finding& f) { return f.rule == "nonfinite"; }));
}

TEST(Debugger, WatchesKeepTheLastStatisticsOfMatchingOutputs) {
  Session session(config());
  Script script;
  auto debugger = attach_debugger(session, script);
  debugger->watch("enc.lin mul");
  debugger->add(parse_breakpoint("op grad_log"));
  run(session, 1);
  const std::vector<Watched> w = debugger->watched();
  ASSERT_EQ(w.size(), 1u);
  ASSERT_TRUE(w[0].stats);
  EXPECT_EQ(w[0].stats->max, 6.0);   // 2 * 3
  EXPECT_EQ(w[0].stats->min, -0.5);  // -0.25 * 2
  EXPECT_EQ(w[0].where, "enc.lin mul");
  EXPECT_EQ(debugger->modules(), (std::vector<std::string>{"dec", "enc.lin"}));
  EXPECT_TRUE(debugger->unwatch("enc.lin mul"));
  EXPECT_FALSE(debugger->unwatch("enc.lin mul"));
}

TEST(Debugger, WatchesKeepACopyOfTheLastMatchingOutput) {
  Session session(config());
  Script script;
  std::vector<double> kept;  // watch1[1] at each stop
  std::vector<std::string> names;
  script.look = [&](const Stop& stop) {
    const std::optional<TensorView> w = stop.tensor("watch1");
    ASSERT_TRUE(w.has_value());
    EXPECT_EQ(w->describe(), "f32[2, 2]");
    kept.push_back(w->at({0, 1}));
    names = stop.tensor_names();
  };
  auto debugger = attach_debugger(session, script);
  debugger->watch("dec log");
  debugger->add(parse_breakpoint("op grad_log"));
  run(session, 3);
  // y[1] = log(h[1] + 1) = log(0.5) in steps 0 and 1; log(-0.5) = NaN in step 2. The producer's
  // vectors are gone by the time of the stop: these are the copies.
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_EQ(kept[0], static_cast<double>(std::log(0.5F)));
  EXPECT_EQ(kept[1], static_cast<double>(std::log(0.5F)));
  EXPECT_TRUE(std::isnan(kept[2]));
  EXPECT_EQ(names.back(), "watch1");
  const std::vector<Watched> w = debugger->watched();
  ASSERT_TRUE(w[0].value);
  EXPECT_EQ(w[0].numel, 4);
  EXPECT_EQ(w[0].step, 2);
}

TEST(Debugger, AWatchKeepsNoCopyOfATensorPastTheBound) {
  Session session(config());
  Script script;
  auto debugger = attach_debugger(session, script);
  debugger->watch("big*");
  Probe probe(session);
  std::vector<float> values(std::size_t(Watched::kWatchKeepValues) + 1, 1.5F);
  probe.begin_step(0);
  probe.observe("big.fill", Phase::forward,
                TensorView(values.data(), DType::f32, {std::int64_t(values.size())}));
  probe.end_step(1.0);
  const std::vector<Watched> w = debugger->watched();
  ASSERT_EQ(w.size(), 1u);
  ASSERT_TRUE(w[0].stats);
  EXPECT_EQ(w[0].stats->max, 1.5);
  EXPECT_EQ(w[0].numel, Watched::kWatchKeepValues + 1);
  EXPECT_FALSE(w[0].value);
}

}  // namespace
}  // namespace tfdebug::ide
