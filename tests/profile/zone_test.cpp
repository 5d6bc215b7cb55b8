#include "tfdebug/profile/zone.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <barrier>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "tfdebug/core/error.hpp"
#include "tfdebug/profile/collector.hpp"

namespace tfdebug::profile {
namespace {

const ThreadTrace* find_thread(const Trace& trace, std::uint32_t tid) {
  for (const auto& thread : trace.threads)
    if (thread.tid == tid) return &thread;
  return nullptr;
}

std::uint32_t this_tid() {
  return static_cast<std::uint32_t>(::gettid());
}

TEST(Zone, NestingAndOrderOnOneThread) {
  start();
  set_thread_name("main");
  {
    TFDEBUG_ZONE("step");
    {
      TFDEBUG_ZONE("forward");
      TFDEBUG_COUNTER("tokens", 128);
    }
    TFDEBUG_INSTANT("checkpoint");
    TFDEBUG_ZONE_BEGIN("backward");
    TFDEBUG_ZONE_END("backward");
  }
  const Trace trace = stop();
  const ThreadTrace* thread = find_thread(trace, this_tid());
  ASSERT_NE(thread, nullptr);
  EXPECT_EQ(thread->name, "main");
  ASSERT_EQ(thread->events.size(), 8u);
  const EventKind kinds[] = {EventKind::kBegin,   EventKind::kBegin, EventKind::kCounter, EventKind::kEnd,
                             EventKind::kInstant, EventKind::kBegin, EventKind::kEnd,     EventKind::kEnd};
  const char* names[] = {"step",       "forward",  "tokens",   "forward",
                         "checkpoint", "backward", "backward", "step"};
  for (std::size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(thread->events[i].kind, kinds[i]) << i;
    EXPECT_EQ(trace.names[thread->events[i].name], names[i]) << i;
    if (i > 0) {
      EXPECT_GE(thread->events[i].ts_ns, thread->events[i - 1].ts_ns) << i;
    }
  }
  EXPECT_EQ(thread->events[2].value, 128.0);
  const std::vector<Slice> all = slices(*thread);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(trace.names[all[0].name], "step");
  EXPECT_EQ(all[0].depth, 0u);
  EXPECT_EQ(all[1].parent, 0);
  EXPECT_EQ(all[2].parent, 0);
  EXPECT_EQ(all[1].depth, 1u);
  EXPECT_EQ(all[0].self_ns, (all[0].end_ns - all[0].start_ns) - (all[1].end_ns - all[1].start_ns) -
                                (all[2].end_ns - all[2].start_ns));
  EXPECT_EQ(thread->dropped, 0u);
}

TEST(Zone, TimestampsFollowTheSteadyClock) {
  start();
  {
    TFDEBUG_ZONE("sleep");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const Trace trace = stop();
  const ThreadTrace* thread = find_thread(trace, this_tid());
  ASSERT_NE(thread, nullptr);
  const std::vector<Slice> all = slices(*thread);
  ASSERT_EQ(all.size(), 1u);
  const std::int64_t ns = all[0].end_ns - all[0].start_ns;
  EXPECT_GE(ns, 20'000'000);
  EXPECT_LT(ns, 2'000'000'000);  // generous: a loaded machine may oversleep, never 100x
}

TEST(Zone, NothingIsRecordedOutsideARecording) {
  EXPECT_FALSE(recording());
  { TFDEBUG_ZONE("before"); }
  int evaluated = 0;
  TFDEBUG_COUNTER("before", ++evaluated);
  EXPECT_EQ(evaluated, 0) << "the counter's value must not be evaluated when not recording";
  start();
  const Trace trace = stop();
  EXPECT_EQ(find_thread(trace, this_tid()), nullptr);
  { TFDEBUG_ZONE("after"); }
  start();
  const Trace again = stop();
  EXPECT_EQ(find_thread(again, this_tid()), nullptr);
}

TEST(Zone, StartAndStopCheckTheirState) {
  EXPECT_THROW(stop(), Error);
  start();
  EXPECT_THROW(start(), Error);
  stop();
  RecordingOptions bad;
  bad.buffer_records = 1;
  EXPECT_THROW(start(bad), Error);
}

// 8 threads record at once while the collector drains. After every 8 bursts the threads meet at
// a barrier until the collector has caught up ("when the collector keeps up": a ring holds 32768
// records, a phase writes 7200 per thread), so the test does not depend on how the machine
// schedules the collector. Every event arrives, in order, attributed to the thread that
// recorded it.
TEST(Zone, EightThreadsLoseNoEvent) {
  constexpr int kThreads = 8;
  constexpr int kPhases = 5;
  constexpr int kBurstsPerPhase = 8;
  constexpr int kPerBurst = 300;  // iterations; 3 events each
  constexpr std::uint64_t kPerPhase = std::uint64_t{kThreads} * kBurstsPerPhase * kPerBurst * 3;
  RecordingOptions options;
  options.buffer_records = std::size_t{1} << 15;
  start(options);
  std::uint64_t phases_done = 0;
  bool caught_up = true;
  std::barrier sync(kThreads, [&]() noexcept {
    ++phases_done;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (stats().collected < phases_done * kPerPhase) {
      if (std::chrono::steady_clock::now() > deadline) {
        caught_up = false;
        return;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  });
  std::vector<std::uint32_t> tids(kThreads);
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t) {
    workers.emplace_back([t, &tids, &sync] {
      tids[static_cast<std::size_t>(t)] = this_tid();
      set_thread_name("worker " + std::to_string(t));
      int seq = 0;
      for (int p = 0; p < kPhases; ++p) {
        for (int b = 0; b < kBurstsPerPhase; ++b) {
          for (int i = 0; i < kPerBurst; ++i) {
            TFDEBUG_ZONE("work");
            TFDEBUG_COUNTER("seq", seq++);
          }
          std::this_thread::yield();
        }
        sync.arrive_and_wait();
      }
    });
  }
  for (auto& w : workers) w.join();
  const Trace trace = stop();
  EXPECT_TRUE(caught_up) << "the collector did not drain a phase within 60 s";
  const RecordingStats final_stats = stats();
  EXPECT_EQ(final_stats.dropped, 0u);
  EXPECT_EQ(final_stats.collected, kPhases * kPerPhase);
  for (int t = 0; t < kThreads; ++t) {
    const ThreadTrace* thread = find_thread(trace, tids[static_cast<std::size_t>(t)]);
    ASSERT_NE(thread, nullptr) << t;
    EXPECT_EQ(thread->name, "worker " + std::to_string(t));
    EXPECT_EQ(thread->dropped, 0u);
    ASSERT_EQ(thread->events.size(), std::size_t{kPhases} * kBurstsPerPhase * kPerBurst * 3);
    double expected = 0;
    for (const TraceEvent& event : thread->events) {
      if (event.kind != EventKind::kCounter) continue;
      ASSERT_EQ(event.value, expected) << "thread " << t;
      expected += 1;
    }
    EXPECT_EQ(slices(*thread).size(), std::size_t{kPhases} * kBurstsPerPhase * kPerBurst);
  }
}

TEST(Zone, KeepLastBoundsTheTrace) {
  RecordingOptions options;
  options.keep_last = 100;
  start(options);
  for (int i = 0; i < 1000; ++i) TFDEBUG_COUNTER("i", i);
  const Trace trace = stop();
  const ThreadTrace* thread = find_thread(trace, this_tid());
  ASSERT_NE(thread, nullptr);
  ASSERT_EQ(thread->events.size(), 100u);
  EXPECT_EQ(thread->evicted, 900u);
  for (std::size_t i = 0; i < 100; ++i) EXPECT_EQ(thread->events[i].value, 900.0 + static_cast<double>(i));
  EXPECT_EQ(stats().evicted, 900u);
}

// A full ring drops new events and counts them; the recording thread never waits.
TEST(Zone, FullBufferDropsAndCounts) {
  RecordingOptions options;
  options.buffer_records = 16;
  options.drain_interval = std::chrono::seconds(30);  // the collector drains once, then waits
  start(options);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::uint32_t tid = 0;
  std::thread burst([&tid] {
    tid = this_tid();  // a new thread: it gets a 16-record buffer
    for (int i = 0; i < 100; ++i) TFDEBUG_INSTANT("tick");
  });
  burst.join();
  const Trace trace = stop();
  const RecordingStats s = stats();
  EXPECT_EQ(s.collected + s.dropped, 100u);
  const ThreadTrace* thread = find_thread(trace, tid);
  ASSERT_NE(thread, nullptr);
  EXPECT_EQ(thread->events.size(), 16u);
  EXPECT_EQ(thread->dropped, 84u);
}

}  // namespace
}  // namespace tfdebug::profile
