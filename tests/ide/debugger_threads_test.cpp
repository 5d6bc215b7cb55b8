// Breakpoints and threads: threads are numbered in the order they first observe; `thread N`
// stops only thread N; while one thread steps, a breakpoint without a thread of its own never
// stops another thread's op (the step ends on the stepping thread), and `thread any` does.
// Ops run on two threads, one after the other (joined), so each case's order is fixed.
#include <gtest/gtest.h>

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tfdebug/core/error.hpp"
#include "tfdebug/ide/debugger.hpp"
#include "tfdebug/session/session.hpp"

namespace tfdebug::ide {
namespace {

class Point final : public PausePoint {
 public:
  explicit Point(const Observation& o) : o_(o) {}
  const Observation& observation() const noexcept override { return o_; }
  std::span<const TensorView> inputs() const noexcept override { return {}; }

 private:
  const Observation& o_;
};

// What a producer does for one op: observe, and pause when asked.
void op(Session& session, const char* module, const char* name) {
  static const float kValues[2] = {1.0F, 2.0F};
  const Observation o{0,   Phase::forward, Role::output, module, name, TensorView(kValues, DType::f32, {2}),
                      true};
  if (session.observe(o).pause) session.pause(Point(o));
}

// Thread 1 is the calling thread; `other` runs on a second thread (thread 2 once it observed).
void on_other_thread(const std::function<void()>& other) {
  std::thread t(other);
  t.join();
}

struct Seen {
  std::string op;
  int thread;
  std::string reason;
};

struct Fixture {
  std::vector<Seen> stops;
  std::deque<Resume> answers;
  std::shared_ptr<Debugger> debugger = std::make_shared<Debugger>([this](const Stop& stop) {
    stops.push_back({stop.op(), stop.thread(), stop.reason().text});
    if (answers.empty()) return Resume::continue_run;
    const Resume r = answers.front();
    answers.pop_front();
    return r;
  });
  Session session{[] {
    RunConfig c;
    c.tier = Tier::diagnose;
    return c;
  }()};
  Fixture() {
    session.add_sink(debugger);
    session.begin_step(0);
  }
};

TEST(DebuggerThreads, NumbersThreadsInTheOrderTheyObserve) {
  Fixture f;
  f.debugger->add(parse_breakpoint("op mul"));
  op(f.session, "a", "mul");
  on_other_thread([&] { op(f.session, "b", "mul"); });
  op(f.session, "a", "mul");
  ASSERT_EQ(f.stops.size(), 3U);
  EXPECT_EQ(f.stops[0].thread, 1);
  EXPECT_EQ(f.stops[1].thread, 2);
  EXPECT_EQ(f.stops[2].thread, 1);
  EXPECT_EQ(f.debugger->threads(), 2);
}

TEST(DebuggerThreads, ThreadNStopsOnlyThatThread) {
  Fixture f;
  const int id = f.debugger->add(parse_breakpoint("op mul thread 2"));
  op(f.session, "a", "mul");
  on_other_thread([&] {
    op(f.session, "b", "mul");
    op(f.session, "b", "mul");
  });
  op(f.session, "a", "mul");
  ASSERT_EQ(f.stops.size(), 2U);
  EXPECT_EQ(f.stops[0].thread, 2);
  EXPECT_EQ(f.stops[1].thread, 2);
  EXPECT_EQ(f.stops[0].reason, "breakpoint 1: op mul thread 2");
  // Thread 1's ops are no hits of it.
  EXPECT_EQ(f.debugger->breakpoints().at(0).hits, 2);
  EXPECT_EQ(f.debugger->breakpoints().at(0).id, id);
}

TEST(DebuggerThreads, AStepIsNotTakenOverByAnotherThreadsBreakpoint) {
  Fixture f;
  f.debugger->add(parse_breakpoint("op first thread 1"));
  f.debugger->add(parse_breakpoint("op mul"));
  f.answers = {Resume::next_op};  // at `first`: step to thread 1's next op
  op(f.session, "a", "first");
  on_other_thread([&] { op(f.session, "b", "mul"); });  // thread 2, while thread 1 steps: no stop
  op(f.session, "a", "second");                         // ends the step
  on_other_thread([&] { op(f.session, "b", "mul"); });  // no step now: stops (a third thread)
  ASSERT_EQ(f.stops.size(), 3U);
  EXPECT_EQ(f.stops[0].op, "first");
  EXPECT_EQ(f.stops[1].op, "second");
  EXPECT_EQ(f.stops[1].thread, 1);
  EXPECT_EQ(f.stops[1].reason, "next op");
  EXPECT_EQ(f.stops[2].op, "mul");
  EXPECT_EQ(f.stops[2].thread, 3);
  // The hit during the step was not counted.
  EXPECT_EQ(f.debugger->breakpoints().at(1).hits, 1);
}

TEST(DebuggerThreads, ThreadAnyStopsAnotherThreadDuringAStep) {
  Fixture f;
  f.debugger->add(parse_breakpoint("op first"));
  f.debugger->add(parse_breakpoint("op mul thread any"));
  f.answers = {Resume::next_op};
  op(f.session, "a", "first");
  on_other_thread([&] { op(f.session, "b", "mul"); });
  op(f.session, "a", "second");  // the stop on thread 2 ended thread 1's step
  ASSERT_EQ(f.stops.size(), 2U);
  EXPECT_EQ(f.stops[1].op, "mul");
  EXPECT_EQ(f.stops[1].thread, 2);
  EXPECT_EQ(f.stops[1].reason, "breakpoint 2: op mul thread any");
}

TEST(DebuggerThreads, ParsesAndPrintsTheThreadOption) {
  EXPECT_EQ(parse_breakpoint("op aten::log* thread 3").thread, 3);
  EXPECT_EQ(parse_breakpoint("nan thread any").thread, Breakpoint::kAnyThread);
  EXPECT_EQ(parse_breakpoint("module blocks.1 backward if nan > 0 thread 2 once").thread, 2);
  EXPECT_EQ(parse_breakpoint("module blocks.1 backward if nan > 0 thread 2 once").text(),
            "module blocks.1 backward if nan > 0 thread 2 once");
  EXPECT_EQ(parse_breakpoint("op mul").thread, 0);
  EXPECT_THROW(parse_breakpoint("op mul thread 0"), Error);
  EXPECT_THROW(parse_breakpoint("op mul thread"), Error);
  EXPECT_THROW(parse_breakpoint("op mul thread some"), Error);
}

}  // namespace
}  // namespace tfdebug::ide
