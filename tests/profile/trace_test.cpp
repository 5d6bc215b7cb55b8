#include "tfdebug/profile/trace.hpp"

#include <gtest/gtest.h>

namespace tfdebug::profile {
namespace {

// main: step [0, 100) { fwd [10, 40) { mm [20, 30) }, fwd [50, 70) }, an unmatched end at 5 is
// skipped, and an open "tail" from 90 is closed at the last timestamp (100).
Trace sample() {
  Trace trace;
  ThreadTrace t;
  t.tid = 7;
  t.name = "main";
  auto ev = [&](std::int64_t ts, const char* name, EventKind kind) {
    t.events.push_back(TraceEvent{ts, trace.intern(name), kind, 0.0});
  };
  ev(0, "step", EventKind::kBegin);
  ev(5, "lost", EventKind::kEnd);  // closes "step", whatever its name
  ev(10, "fwd", EventKind::kBegin);
  ev(20, "mm", EventKind::kBegin);
  ev(30, "mm", EventKind::kEnd);
  ev(40, "fwd", EventKind::kEnd);
  ev(50, "fwd", EventKind::kBegin);
  ev(70, "fwd", EventKind::kEnd);
  ev(90, "tail", EventKind::kBegin);
  ev(100, "x", EventKind::kInstant);
  trace.threads.push_back(t);
  return trace;
}

TEST(Trace, InternIsStable) {
  Trace trace;
  EXPECT_EQ(trace.intern("a"), 0u);
  EXPECT_EQ(trace.intern("b"), 1u);
  EXPECT_EQ(trace.intern("a"), 0u);
  trace.names.push_back("c");
  EXPECT_EQ(trace.intern("c"), 2u);
  EXPECT_EQ(trace.names.size(), 3u);
}

TEST(Trace, EndClosesTheInnermostSliceAndOpenSlicesCloseAtTheEnd) {
  Trace trace;
  ThreadTrace t;
  const auto a = trace.intern("a");
  t.events = {{0, a, EventKind::kEnd, 0},
              {1, a, EventKind::kBegin, 0},
              {2, a, EventKind::kBegin, 0},
              {4, a, EventKind::kEnd, 0},
              {9, a, EventKind::kInstant, 0}};
  const auto all = slices(t);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].start_ns, 1);
  EXPECT_EQ(all[0].end_ns, 9);
  EXPECT_EQ(all[0].self_ns, 6);
  EXPECT_EQ(all[1].start_ns, 2);
  EXPECT_EQ(all[1].end_ns, 4);
  EXPECT_EQ(all[1].parent, 0);
}

TEST(Trace, SummaryHasSelfAndTotalTimes) {
  Trace trace = sample();
  // The end at 5 closes "step" (Chrome semantics: an end closes the innermost open slice).
  const auto all = slices(trace.threads[0]);
  ASSERT_EQ(all.size(), 5u);
  EXPECT_EQ(all[0].end_ns, 5);
  const TraceSummary s = summarize(trace);
  EXPECT_EQ(s.start_ns, 0);
  EXPECT_EQ(s.end_ns, 100);
  ASSERT_EQ(s.threads.size(), 1u);
  EXPECT_EQ(s.threads[0].slices, 5u);
  EXPECT_EQ(s.threads[0].events, 10u);
  // top-level: step [0,5), fwd [10,40), fwd [50,70), tail [90,100)
  EXPECT_EQ(s.threads[0].busy_ns, 5 + 30 + 20 + 10);
  ASSERT_EQ(s.frames.size(), 4u);
  EXPECT_EQ(s.frames[0].name, "fwd");
  EXPECT_EQ(s.frames[0].self_ns, 20 + 20);
  EXPECT_EQ(s.frames[0].total_ns, 50);
  EXPECT_EQ(s.frames[0].calls, 2u);
  EXPECT_EQ(s.frames[1].name, "mm");
  EXPECT_EQ(s.frames[1].self_ns, 10);
}

TEST(Trace, RecursionCountsTotalOnce) {
  Trace trace;
  ThreadTrace t;
  const auto f = trace.intern("f");
  t.events = {{0, f, EventKind::kBegin, 0},
              {10, f, EventKind::kBegin, 0},
              {20, f, EventKind::kEnd, 0},
              {30, f, EventKind::kEnd, 0}};
  trace.threads.push_back(t);
  const TraceSummary s = summarize(trace);
  ASSERT_EQ(s.frames.size(), 1u);
  EXPECT_EQ(s.frames[0].total_ns, 30);
  EXPECT_EQ(s.frames[0].self_ns, 30);
  EXPECT_EQ(s.frames[0].calls, 2u);
}

}  // namespace
}  // namespace tfdebug::profile
