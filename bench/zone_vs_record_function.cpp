// A profiling zone against LibTorch's RECORD_FUNCTION and the plain clock reads, in one process:
// every variant times a batch of 65,536 zones (begin + end), the variants interleaved in rounds
// so that a noisy neighbour slows them alike; per variant the median over rounds of the thread's
// CPU time and of the wall time per zone, the spread (min, max) of the CPU time, and the median
// over rounds of its ratio to the steady_clock pair and to TFDEBUG_ZONE in the same round.
//
//   OPENBLAS_NUM_THREADS=1 build/release/bench/zone_vs_record_function [--rounds N]
//
// Variants:
//   steady_clock pair          two std::chrono::steady_clock::now() calls
//   rdtsc pair                 two TSC reads (what a zone's timestamps cost)
//   TFDEBUG_ZONE, recording    a zone while a recording runs (the ring holds the batch: no drop)
//   TFDEBUG_ZONE, idle         a zone with no recording running
//   RECORD_FUNCTION, no cb     at::RecordFunction with no callback registered
//   RECORD_FUNCTION + cb (clock)  with one global start + end callback, as LibTorch's profiler
//                              registers its own (no inputs), that writes a steady_clock
//                              timestamp into a preallocated buffer at start and at end
//   RECORD_FUNCTION + cb (rdtsc)  the same callback writing TSC timestamps
#include <ATen/record_function.h>
#include <benchmark/benchmark.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "tfdebug/profile/collector.hpp"
#include "tfdebug/profile/zone.hpp"

namespace {

namespace profile = tfdebug::profile;

constexpr int kZones = 1 << 16;

// The observer's preallocated buffer: two timestamps per zone, reset before each batch.
std::vector<std::int64_t> g_stamps;
std::size_t g_next = 0;

std::unique_ptr<at::ObserverContext> clock_start(const at::RecordFunction&) {
  g_stamps[g_next++] = std::chrono::steady_clock::now().time_since_epoch().count();
  return nullptr;
}
void clock_end(const at::RecordFunction&, at::ObserverContext*) {
  g_stamps[g_next++] = std::chrono::steady_clock::now().time_since_epoch().count();
}
std::unique_ptr<at::ObserverContext> tsc_start(const at::RecordFunction&) {
  g_stamps[g_next++] = static_cast<std::int64_t>(profile::detail::now_ticks());
  return nullptr;
}
void tsc_end(const at::RecordFunction&, at::ObserverContext*) {
  g_stamps[g_next++] = static_cast<std::int64_t>(profile::detail::now_ticks());
}

enum class Variant { steady_pair, rdtsc_pair, zone_recording, zone_idle, rf_none, rf_clock, rf_tsc };
constexpr std::array kVariants = {Variant::steady_pair, Variant::rdtsc_pair, Variant::zone_recording,
                                  Variant::zone_idle,   Variant::rf_none,    Variant::rf_clock,
                                  Variant::rf_tsc};
const char* variant_name(Variant v) {
  switch (v) {
    case Variant::steady_pair:
      return "steady_clock pair";
    case Variant::rdtsc_pair:
      return "rdtsc pair";
    case Variant::zone_recording:
      return "TFDEBUG_ZONE, recording";
    case Variant::zone_idle:
      return "TFDEBUG_ZONE, idle";
    case Variant::rf_none:
      return "RECORD_FUNCTION, no cb";
    case Variant::rf_clock:
      return "RECORD_FUNCTION + cb (clock)";
    case Variant::rf_tsc:
      return "RECORD_FUNCTION + cb (rdtsc)";
  }
  return "?";
}

double thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return 1e9 * static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec);
}

struct Sample {
  double cpu_ns;   // per zone
  double wall_ns;  // per zone
};

// One batch of kZones zones of variant `v`; setup and teardown (callback registration, starting
// and stopping a recording) stay outside the timed part.
Sample run_batch(Variant v, std::uint64_t& dropped, std::size_t& stamps) {
  std::optional<at::CallbackHandle> handle;
  if (v == Variant::rf_clock || v == Variant::rf_tsc) {
    g_next = 0;
    handle =
        at::addGlobalCallback(v == Variant::rf_clock ? at::RecordFunctionCallback(&clock_start, &clock_end)
                                                     : at::RecordFunctionCallback(&tsc_start, &tsc_end));
  }
  if (v == Variant::zone_recording) {
    profile::RecordingOptions options;
    options.buffer_records = std::size_t{1} << 18;
    options.drain_interval = std::chrono::seconds(100);
    profile::start(options);
  }
  const double cpu0 = thread_cpu_ns();
  const auto wall0 = std::chrono::steady_clock::now();
  switch (v) {
    case Variant::steady_pair:
      for (int i = 0; i < kZones; ++i) {
        auto a = std::chrono::steady_clock::now();
        benchmark::DoNotOptimize(a);
        auto b = std::chrono::steady_clock::now();
        benchmark::DoNotOptimize(b);
      }
      break;
    case Variant::rdtsc_pair:
      for (int i = 0; i < kZones; ++i) {
        auto a = profile::detail::now_ticks();
        benchmark::DoNotOptimize(a);
        auto b = profile::detail::now_ticks();
        benchmark::DoNotOptimize(b);
      }
      break;
    case Variant::zone_recording:
    case Variant::zone_idle:
      for (int i = 0; i < kZones; ++i) {
        TFDEBUG_ZONE("zone");
        benchmark::ClobberMemory();
      }
      break;
    case Variant::rf_none:
    case Variant::rf_clock:
    case Variant::rf_tsc:
      for (int i = 0; i < kZones; ++i) {
        RECORD_FUNCTION("zone", c10::ArrayRef<const c10::IValue>{});
        benchmark::ClobberMemory();
      }
      break;
  }
  const auto wall1 = std::chrono::steady_clock::now();
  const double cpu1 = thread_cpu_ns();
  if (handle) {
    at::removeCallback(*handle);
    stamps += g_next;
  }
  if (v == Variant::zone_recording) {
    benchmark::DoNotOptimize(profile::stop());
    dropped += profile::stats().dropped;
  }
  return {(cpu1 - cpu0) / kZones, std::chrono::duration<double, std::nano>(wall1 - wall0).count() / kZones};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 30;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: zone_vs_record_function [--rounds N]\n");
      return 2;
    }
  }
  if (rounds < 1) {
    std::fprintf(stderr, "zone_vs_record_function: --rounds must be at least 1\n");
    return 2;
  }
  g_stamps.assign(2 * static_cast<std::size_t>(kZones), 0);

  constexpr std::size_t kCount = kVariants.size();
  std::array<std::vector<Sample>, kCount> samples;
  std::uint64_t dropped = 0;
  std::size_t stamps = 0;
  for (std::size_t k = 0; k < kCount; ++k) run_batch(kVariants[k], dropped, stamps);  // warm-up
  dropped = 0;
  stamps = 0;
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t k = 0; k < kCount; ++k) samples[k].push_back(run_batch(kVariants[k], dropped, stamps));
  }

  const auto index_of = [](Variant v) {
    return static_cast<std::size_t>(std::find(kVariants.begin(), kVariants.end(), v) - kVariants.begin());
  };
  const std::size_t steady = index_of(Variant::steady_pair);
  const std::size_t zone = index_of(Variant::zone_recording);
  std::printf("%d zones per batch, %d interleaved rounds; per zone (begin + end), median over rounds\n",
              kZones, rounds);
  std::printf("  %-30s %9s %9s %19s %10s %10s\n", "", "CPU ns", "wall ns", "CPU min..max", "/ steady",
              "/ zone");
  for (std::size_t k = 0; k < kCount; ++k) {
    std::vector<double> cpu;
    std::vector<double> wall;
    std::vector<double> to_steady;
    std::vector<double> to_zone;
    for (int r = 0; r < rounds; ++r) {
      const auto ri = static_cast<std::size_t>(r);
      cpu.push_back(samples[k][ri].cpu_ns);
      wall.push_back(samples[k][ri].wall_ns);
      to_steady.push_back(samples[k][ri].cpu_ns / samples[steady][ri].cpu_ns);
      to_zone.push_back(samples[k][ri].cpu_ns / samples[zone][ri].cpu_ns);
    }
    const auto [lo, hi] = std::minmax_element(cpu.begin(), cpu.end());
    std::printf("  %-30s %9.2f %9.2f %8.2f..%-8.2f %9.2fx %9.2fx\n", variant_name(kVariants[k]), median(cpu),
                median(wall), *lo, *hi, median(to_steady), median(to_zone));
  }
  // Checks that what was timed really ran: every zone recorded, every callback called.
  const auto expected_stamps = static_cast<std::size_t>(rounds) * 2 * 2 * kZones;
  std::printf("dropped zone events: %llu; observer timestamps written: %zu of %zu\n",
              static_cast<unsigned long long>(dropped), stamps, expected_stamps);
  return stamps == expected_stamps && dropped == 0 ? 0 : 1;
}
