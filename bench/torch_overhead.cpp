// Overhead of tfdebug::torch on the demo model: median training-step time with tfdebug off,
// attached in watch and in diagnose, with LibTorch's anomaly mode, and under the op profiler
// (tfdebug::torch::Profiler, what `tfdebug demo --profile` runs), all in one process, as ratios
// to off. bench/torch_overhead.sh runs it (and the Python peers) and prints the table.
//
//   torch_overhead [--rounds N] [--steps N] [--default-only] [--no-anomaly] [--modes LIST]
//
// --modes picks the modes to run, comma separated, from: off, floor, watch-null, watch,
// diagnose-null, diagnose, anomaly, profiler, profiler-no-memory ("off" always runs: the
// ratios are to it). Default: all but the two profiler modes.
#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <torch/csrc/autograd/anomaly_mode.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "demo_model.hpp"
#include "tfdebug/session/session.hpp"
#include "tfdebug/torch/attach.hpp"
#include "tfdebug/torch/profiler.hpp"

namespace {

// The floor under any RecordFunction observer: a callback that does nothing, registered the way
// the adapter registers its own (inputs and outputs), so every op boxes them.
std::unique_ptr<at::ObserverContext> empty_start(const at::RecordFunction&) {
  return nullptr;
}
void empty_end(const at::RecordFunction&, at::ObserverContext*) {}

// The adapter alone: takes each observation and does nothing with it.
class NullSink : public tfdebug::ObservationSink {
 public:
  explicit NullSink(tfdebug::Tier tier) : tier_(tier) {}
  void begin_step(std::int64_t) override {}
  tfdebug::Verdict observe(const tfdebug::Observation&) override { return std::nullopt; }
  void end_step(std::int64_t, std::optional<double>) override {}
  tfdebug::Tier tier() const noexcept override { return tier_; }
  bool should_stop() const noexcept override { return false; }

 private:
  tfdebug::Tier tier_;
};

// A sink that wants every step's metrics; with `sleep`, it takes 20 ms over each event, more
// than three times the demo's step (Note [Sink delivery]: queued, it costs the training thread
// nothing beyond the metrics themselves).
class MetricsSink : public tfdebug::Sink {
 public:
  explicit MetricsSink(bool sleep) : sleep_(sleep) {}
  void on_finding(const tfdebug::Finding&) override { pause(); }
  void on_step(const tfdebug::StepMetrics&) override { pause(); }
  void on_run_end(const tfdebug::RunSummary&) override {}
  bool wants_step_metrics() const noexcept override { return true; }

 private:
  void pause() const {
    if (sleep_) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  bool sleep_;
};

enum class Mode {
  off,
  floor,
  watch_null,
  watch,
  diagnose_null,
  diagnose,
  anomaly,
  profiler,
  profiler_no_memory,
  watch_metrics,
  watch_slow_sink
};
constexpr Mode kModes[] = {Mode::off,           Mode::floor,          Mode::watch_null,
                           Mode::watch,         Mode::diagnose_null,  Mode::diagnose,
                           Mode::anomaly,       Mode::profiler,       Mode::profiler_no_memory,
                           Mode::watch_metrics, Mode::watch_slow_sink};
// Names for --modes.
const char* mode_key(Mode m) {
  switch (m) {
    case Mode::off:
      return "off";
    case Mode::floor:
      return "floor";
    case Mode::watch_null:
      return "watch-null";
    case Mode::watch:
      return "watch";
    case Mode::diagnose_null:
      return "diagnose-null";
    case Mode::diagnose:
      return "diagnose";
    case Mode::anomaly:
      return "anomaly";
    case Mode::profiler:
      return "profiler";
    case Mode::profiler_no_memory:
      return "profiler-no-memory";
    case Mode::watch_metrics:
      return "watch-metrics";
    case Mode::watch_slow_sink:
      return "watch-slow-sink";
  }
  return "?";
}
const char* mode_name(Mode m) {
  switch (m) {
    case Mode::off:
      return "off";
    case Mode::floor:
      return "empty RecordFunction cb";
    case Mode::watch_null:
      return "watch (adapter only)";
    case Mode::watch:
      return "watch (Session)";
    case Mode::diagnose_null:
      return "diagnose (adapter only)";
    case Mode::diagnose:
      return "diagnose (Session)";
    case Mode::anomaly:
      return "LibTorch anomaly mode";
    case Mode::profiler:
      return "op profiler (demo --profile)";
    case Mode::profiler_no_memory:
      return "op profiler, memory off";
    case Mode::watch_metrics:
      return "watch + metrics sink";
    case Mode::watch_slow_sink:
      return "watch + 20 ms/event sink";
  }
  return "?";
}

struct Runner {
  Mode mode;
  std::unique_ptr<tfdebug::demo::DemoTrainer> trainer;
  std::unique_ptr<tfdebug::ObservationSink> sink;
  std::vector<double> times;
  std::vector<double> round_medians;  // the median step of each round
  std::int64_t step = 0;
  std::int64_t ops = 0;  // ops the adapter's callback (or the profiler) saw, over the timed steps
  tfdebug::demo::DemoConfig config;

  void run(std::int64_t steps) {
    std::optional<tfdebug::torch::Attachment> debug;
    if (sink) debug.emplace(tfdebug::torch::attach(*sink, trainer->model()));
    // The profiler as `tfdebug demo --profile` constructs it; one per run of steps (only one may
    // run at a time, and the modes interleave), stopped outside the timed steps.
    std::optional<tfdebug::torch::Profiler> profiler;
    if (mode == Mode::profiler || mode == Mode::profiler_no_memory) {
      tfdebug::torch::ProfilerOptions options;
      options.samples_per_step = double(config.batch);
      options.tokens_per_step = double(config.batch * 2 * config.length);
      options.memory = mode == Mode::profiler;
      profiler.emplace(trainer->model(), options);
    }
    std::optional<at::CallbackHandle> empty;
    if (mode == Mode::floor) {
      empty =
          at::addGlobalCallback(at::RecordFunctionCallback(&empty_start, &empty_end)
                                    .needsInputs(true)
                                    .needsOutputs(true)
                                    .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION}));
    }
    const bool anomaly = mode == Mode::anomaly;
    torch::autograd::AnomalyMode::set_enabled(anomaly);
    for (std::int64_t i = 0; i < steps; ++i, ++step) {
      const auto start = std::chrono::steady_clock::now();
      if (debug) debug->step_begin(step);
      if (profiler) profiler->step_begin(step);
      const double loss = trainer->train_step();
      if (debug) debug->step_end(step, loss);
      if (profiler) profiler->step_end(step);
      times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    torch::autograd::AnomalyMode::set_enabled(false);
    if (empty) at::removeCallback(*empty);
    if (debug) ops += debug->counters().ops;
    if (profiler) ops += static_cast<std::int64_t>(profiler->stop().ops_seen);
  }
  double median() const { return median_of(times); }
  static double median_of(const std::vector<double>& values) {
    auto sorted = values;
    std::sort(sorted.begin(), sorted.end());
    return sorted[sorted.size() / 2];
  }
};

// Modes to run (--modes; --no-anomaly leaves the slowest mode out).
std::vector<Mode> g_modes = {Mode::off,           Mode::floor,    Mode::watch_null, Mode::watch,
                             Mode::diagnose_null, Mode::diagnose, Mode::anomaly};

void measure(const char* label, const tfdebug::demo::DemoConfig& config, int rounds, std::int64_t steps) {
  std::vector<Runner> runners;
  for (Mode mode : g_modes) {
    Runner r{mode, std::make_unique<tfdebug::demo::DemoTrainer>(config), nullptr, {}, {}, 0, 0, config};
    if (mode == Mode::watch_null) r.sink = std::make_unique<NullSink>(tfdebug::Tier::watch);
    if (mode == Mode::diagnose_null) r.sink = std::make_unique<NullSink>(tfdebug::Tier::diagnose);
    if (mode == Mode::watch || mode == Mode::diagnose || mode == Mode::watch_metrics ||
        mode == Mode::watch_slow_sink) {
      tfdebug::RunConfig run;  // every rule at its default; no run directory
      run.tier = mode == Mode::diagnose ? tfdebug::Tier::diagnose : tfdebug::Tier::watch;
      auto session = std::make_unique<tfdebug::Session>(run);
      if (mode == Mode::watch_metrics || mode == Mode::watch_slow_sink)
        session->add_sink(std::make_shared<MetricsSink>(mode == Mode::watch_slow_sink));
      r.sink = std::move(session);
    }
    r.run(3);  // warm-up
    r.times.clear();
    r.round_medians.clear();
    r.ops = 0;
    runners.push_back(std::move(r));
  }
  // Interleaved rounds, so that a noisy neighbour slows every mode alike.
  for (int round = 0; round < rounds; ++round) {
    for (auto& r : runners) {
      const std::size_t first = r.times.size();
      r.run(steps);
      r.round_medians.push_back(
          Runner::median_of(std::vector<double>(r.times.begin() + std::ptrdiff_t(first), r.times.end())));
    }
  }
  const double off = runners[0].median();
  // Paired: the median over rounds of this mode's round median over off's in the same round.
  // The machine's speed drifts between rounds (shared cores); within a round the modes run
  // back to back, so the pairs cancel most of the drift.
  auto paired = [&runners](const Runner& r) {
    std::vector<double> ratios;
    for (std::size_t i = 0; i < r.round_medians.size(); ++i)
      ratios.push_back(r.round_medians[i] / runners[0].round_medians[i]);
    return Runner::median_of(ratios);
  };
  std::printf(
      "%s: d_model %lld, %lld blocks, %lld heads, d_ff %lld, batch %lld x %lld tokens, %lld parameters; "
      "%zu steps per mode\n",
      label, static_cast<long long>(config.d_model), static_cast<long long>(config.layers),
      static_cast<long long>(config.heads), static_cast<long long>(config.d_ff),
      static_cast<long long>(config.batch), static_cast<long long>(2 * config.length),
      static_cast<long long>(runners[0].trainer->parameter_count()), runners[0].times.size());
  for (const auto& r : runners) {
    std::printf("  %-30s %9.3f ms  %6.3fx   paired %6.3fx", mode_name(r.mode), 1e3 * r.median(),
                r.median() / off, paired(r));
    if (r.ops > 0) std::printf("  %7.0f ops/step seen", double(r.ops) / double(r.times.size()));
    std::printf("\n");
  }
  std::fflush(stdout);
}

// "off,profiler" -> the modes, off first; nullopt when a name is unknown.
std::optional<std::vector<Mode>> parse_modes(const std::string& list) {
  std::vector<Mode> modes = {Mode::off};
  std::size_t begin = 0;
  while (begin <= list.size()) {
    const std::size_t comma = std::min(list.find(',', begin), list.size());
    const std::string key = list.substr(begin, comma - begin);
    const auto* it =
        std::find_if(std::begin(kModes), std::end(kModes), [&](Mode m) { return key == mode_key(m); });
    if (it == std::end(kModes)) return std::nullopt;
    if (std::find(modes.begin(), modes.end(), *it) == modes.end()) modes.push_back(*it);
    begin = comma + 1;
  }
  return modes;
}

int usage() {
  std::fprintf(
      stderr,
      "usage: torch_overhead [--rounds N] [--steps N] [--default-only] [--no-anomaly] [--modes LIST]\n"
      "  LIST: comma separated, from off, floor, watch-null, watch, diagnose-null, diagnose, anomaly,\n"
      "  profiler, profiler-no-memory\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5;
  std::int64_t steps = 20;
  bool default_only = false;
  bool anomaly = true;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--default-only") == 0) {
      default_only = true;
    } else if (std::strcmp(argv[i], "--no-anomaly") == 0) {
      anomaly = false;
    } else if (std::strcmp(argv[i], "--rounds") == 0 && has_value) {
      rounds = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--steps") == 0 && has_value) {
      steps = std::atoll(argv[++i]);
    } else if (std::strcmp(argv[i], "--modes") == 0 && has_value) {
      auto modes = parse_modes(argv[++i]);
      if (!modes) {
        std::fprintf(stderr, "torch_overhead: --modes: unknown mode in '%s'\n", argv[i]);
        return usage();
      }
      g_modes = std::move(*modes);
    } else {
      return usage();
    }
  }
  if (rounds < 1 || steps < 1) {
    std::fprintf(stderr, "torch_overhead: --rounds and --steps must be at least 1\n");
    return 2;
  }
  if (!anomaly) std::erase(g_modes, Mode::anomaly);
  at::set_num_threads(1);
  tfdebug::demo::DemoConfig small;  // the demo's default size
  measure("default", small, rounds, steps);
  if (default_only) return 0;
  tfdebug::demo::DemoConfig large;
  large.d_model = 128;
  large.heads = 4;
  large.layers = 4;
  large.d_ff = 512;
  large.length = 16;
  measure("larger", large, rounds, std::max<std::int64_t>(1, steps / 4));
  return 0;
}
