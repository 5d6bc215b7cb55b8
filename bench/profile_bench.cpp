// The cost of a profiling zone against the plain clock reads it replaces, in the same run.
//
//   build/release/bench/profile_bench --benchmark_repetitions=10
//       --benchmark_report_aggregates_only=true        (one command line)
//
// zone/recording is TFDEBUG_ZONE (begin + end: two timestamps, two 32-byte records) while a
// recording runs and the collector drains; zone/idle the same with no recording (one relaxed
// load). steady_clock/pair is two std::chrono::steady_clock::now() calls; rdtsc/pair two reads
// of the TSC. collector/drain times stop() draining and converting 1M buffered events.
// LibTorch's RECORD_FUNCTION is measured against a zone in bench/zone_vs_record_function.cpp
// (built only when LibTorch is found).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>

#include "tfdebug/profile/collector.hpp"
#include "tfdebug/profile/zone.hpp"

namespace {

namespace profile = tfdebug::profile;

void steady_clock_pair(benchmark::State& state) {
  for (auto _ : state) {
    auto a = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(a);
    auto b = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(b);
  }
}
BENCHMARK(steady_clock_pair)->Name("steady_clock/pair");

void rdtsc_pair(benchmark::State& state) {
  for (auto _ : state) {
    auto a = profile::detail::now_ticks();
    benchmark::DoNotOptimize(a);
    auto b = profile::detail::now_ticks();
    benchmark::DoNotOptimize(b);
  }
}
BENCHMARK(rdtsc_pair)->Name("rdtsc/pair");

void zone_idle(benchmark::State& state) {
  for (auto _ : state) {
    TFDEBUG_ZONE("idle");
    benchmark::ClobberMemory();
  }
}
BENCHMARK(zone_idle)->Name("zone/idle");

// Zones recorded in batches of 2^16 into a ring that holds them all, with the collector asleep:
// the recording thread's own cost, with no event dropped. ns_per_zone_cpu (CPU time per zone,
// printed with an "s" suffix that means ns) is the figure to read; Time / 65536 is the wall cost.
void zone_recording(benchmark::State& state) {
  constexpr int kZones = 1 << 16;
  std::uint64_t dropped = 0;
  for (auto _ : state) {
    state.PauseTiming();
    profile::RecordingOptions options;
    options.buffer_records = std::size_t{1} << 18;
    options.drain_interval = std::chrono::seconds(100);
    profile::start(options);
    state.ResumeTiming();
    for (int i = 0; i < kZones; ++i) {
      TFDEBUG_ZONE("zone");
      benchmark::ClobberMemory();
    }
    state.PauseTiming();
    benchmark::DoNotOptimize(profile::stop());
    dropped += profile::stats().dropped;
    state.ResumeTiming();
  }
  state.counters["ns_per_zone_cpu"] = benchmark::Counter(
      kZones * 1e-9, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["dropped"] = static_cast<double>(dropped);
}
BENCHMARK(zone_recording)->Name("zone/recording")->Unit(benchmark::kMicrosecond);

// The same tight loop with the collector draining every 200 µs into a 2^20-record ring: on a
// machine where the collector cannot keep up with ~50 M events/s, the ring fills and events are
// dropped (counted, never blocking).
void zone_recording_collected(benchmark::State& state) {
  profile::RecordingOptions options;
  options.buffer_records = std::size_t{1} << 20;
  profile::start(options);
  for (auto _ : state) {
    TFDEBUG_ZONE("zone");
    benchmark::ClobberMemory();
  }
  profile::stop();
  const profile::RecordingStats s = profile::stats();
  state.counters["dropped"] = static_cast<double>(s.dropped);
  state.counters["collected"] = static_cast<double>(s.collected);
}
BENCHMARK(zone_recording_collected)->Name("zone/recording+collector");

void counter_recording(benchmark::State& state) {
  profile::RecordingOptions options;
  options.buffer_records = std::size_t{1} << 20;
  profile::start(options);
  double v = 0;
  for (auto _ : state) {
    TFDEBUG_COUNTER("value", v);
    v += 1;
  }
  profile::stop();
  state.counters["dropped"] = static_cast<double>(profile::stats().dropped);
}
BENCHMARK(counter_recording)->Name("counter/recording");

// Events the collector moves per second: 1M events wait in one ring (the collector sleeps), then
// stop() drains, converts and interns them.
void collector_drain(benchmark::State& state) {
  constexpr int kZones = 1 << 19;  // 2^20 events
  for (auto _ : state) {
    state.PauseTiming();
    profile::RecordingOptions options;
    options.buffer_records = std::size_t{1} << 21;
    options.drain_interval = std::chrono::seconds(100);
    profile::start(options);
    for (int i = 0; i < kZones; ++i) {
      TFDEBUG_ZONE("drained");
    }
    state.ResumeTiming();
    profile::Trace trace = profile::stop();
    benchmark::DoNotOptimize(trace);
  }
  state.SetItemsProcessed(state.iterations() * 2 * kZones);
}
BENCHMARK(collector_drain)->Name("collector/drain")->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
