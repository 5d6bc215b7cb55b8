// Overhead of tfdebug::torch on the demo model or the zoo's (tools/tfdebug/demo/zoo.hpp): median
// training-step time with tfdebug off, attached in watch and in diagnose (each step handed to
// Attachment::step, as the README shows), with LibTorch's anomaly mode, and under the op profiler
// (tfdebug::torch::Profiler, what `tfdebug demo --profile` runs), all in one process, as ratios
// to off; and for zoo models the cost of the one step that a replay runs twice. bench/
// torch_overhead.sh runs it (and the Python peers) and prints the table.
//
//   torch_overhead [--model NAME] [--rounds N] [--steps N] [--default-only] [--no-anomaly]
//                  [--modes LIST] [--split] [--clock wall|thread-cpu] [--malloc fixed|default]
//                  [--no-samples] [--no-replay]
//
// --model: demo (the default: the demo's model at two sizes), mlp, cnn, encoder, gru, sigmoid,
// or zoo (each of the five). --modes picks the modes to run, comma separated, from: off, off-again,
// floor, watch-null, watch, diagnose-null, diagnose, anomaly, profiler, profiler-no-memory ("off"
// always runs: the ratios are to it; also watch-fixed: watch sampling every 10th step
// (AttachOptions::watch_budget = 0) instead of by cost; watch-metrics, watch-slow-sink, diagnose-breakpoints,
// diagnose-metrics: diagnose with a sink that wants step metrics, as the live dashboard does;
// diagnose-shapes). Default: all but the two profiler modes.
//
// off-again is off on a second model of its own: the A/A row, what two identical modes differ by
// here (a ratio in it is the bench's resolution, not tfdebug's cost).
// --split prints, under the table, the median of the steps that observed ops (watch's samples)
// and of the other steps, apart, each against off's. Under the table too, what the rules found in
// each mode that runs a Session: a new warning runs the steps after it in diagnose.
// Each round attaches afresh (one attachment may be live at a time, and the modes interleave),
// and an attachment's watch schedule starts afresh too: its first step samples, and so does the
// one 10 steps later (Note [Watch budget]); only rounds of more steps than that show the spacing
// a run attached once gets (--steps 200).
// --clock thread-cpu times each step by the calling thread's CPU time instead of wall time.
// --no-samples: the watch modes sample their first step only, so that a row is the steps between
// samples alone; --no-replay turns AttachOptions::replay off in every attached mode.
// --malloc fixed (the default) pins glibc's heap before any mode runs: see Note [A fixed heap].
// --malloc default leaves glibc's adaptive thresholds as they are.
//
// Note [A fixed heap]
// ~~~~~~~~~~~~~~~~~~~
// glibc's malloc adapts its mmap threshold to the sizes freed, and gives the top of the heap back
// to the kernel (sbrk) once more than twice that threshold is free. Whether a step's large
// temporaries (a convolution's columns, activations of a few hundred KB) land in a part of the
// heap that is trimmed after every step depends on the whole process's allocation history: the
// zoo's CNN, with no tfdebug at all, ran 2.2 ms a step in one process and 20 ms in the next, 1,000
// page faults a step, and a mode attached to tfdebug read 0.5x to 4x of "off" by chance of heap
// layout. The ratios below are about tfdebug, not about that lottery, so the bench fixes both
// thresholds (mallopt; the same for every mode, as MALLOC_MMAP_THRESHOLD_ / MALLOC_TRIM_THRESHOLD_
// would) before the first tensor is made.
#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <torch/csrc/autograd/anomaly_mode.h>

#include <dlfcn.h>
#include <malloc.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "demo_model.hpp"
#include "tfdebug/ide/debugger.hpp"
#include "tfdebug/ide/shape_recorder.hpp"
#include "tfdebug/session/session.hpp"
#include "tfdebug/torch/attach.hpp"
#include "tfdebug/torch/profiler.hpp"
#include "zoo.hpp"

namespace {

// --clock: wall time (steady_clock), or this thread's CPU time, which a busy neighbour on the
// shared cores disturbs far less (LibTorch runs the whole step on the calling thread here:
// one intra-op thread, CPU autograd on the caller).
bool g_thread_cpu_clock = false;
// --no-samples: watch modes sample no step after the first (the steps between samples alone);
// --no-replay: AttachOptions::replay off (what the replay's arming, hooks and checks cost).
bool g_no_samples = false;
bool g_no_replay = false;
double now() {
  if (g_thread_cpu_clock) {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

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
  off_again,
  floor,
  watch_null,
  watch,
  watch_fixed,
  diagnose_null,
  diagnose,
  anomaly,
  profiler,
  profiler_no_memory,
  watch_metrics,
  watch_slow_sink,
  diagnose_breakpoints,
  diagnose_shapes,
  diagnose_metrics
};
constexpr Mode kModes[] = {Mode::off,
                           Mode::off_again,
                           Mode::floor,
                           Mode::watch_null,
                           Mode::watch,
                           Mode::watch_fixed,
                           Mode::diagnose_null,
                           Mode::diagnose,
                           Mode::anomaly,
                           Mode::profiler,
                           Mode::profiler_no_memory,
                           Mode::watch_metrics,
                           Mode::watch_slow_sink,
                           Mode::diagnose_breakpoints,
                           Mode::diagnose_shapes,
                           Mode::diagnose_metrics};
// Names for --modes.
const char* mode_key(Mode m) {
  switch (m) {
    case Mode::off:
      return "off";
    case Mode::off_again:
      return "off-again";
    case Mode::floor:
      return "floor";
    case Mode::watch_null:
      return "watch-null";
    case Mode::watch:
      return "watch";
    case Mode::watch_fixed:
      return "watch-fixed";
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
    case Mode::diagnose_breakpoints:
      return "diagnose-breakpoints";
    case Mode::diagnose_shapes:
      return "diagnose-shapes";
    case Mode::diagnose_metrics:
      return "diagnose-metrics";
  }
  return "?";
}
const char* mode_name(Mode m) {
  switch (m) {
    case Mode::off:
      return "off";
    case Mode::off_again:
      return "off, a second model (A/A)";
    case Mode::floor:
      return "empty RecordFunction cb";
    case Mode::watch_null:
      return "watch (adapter only)";
    case Mode::watch:
      return "watch (Session)";
    case Mode::watch_fixed:
      return "watch, every 10th step";
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
    case Mode::diagnose_breakpoints:
      return "diagnose + unhit breakpoints";
    case Mode::diagnose_shapes:
      return "diagnose + shapes export";
    case Mode::diagnose_metrics:
      return "diagnose + metrics sink";
  }
  return "?";
}

// What a runner trains: the demo's model or a zoo model.
class Model {
 public:
  virtual ~Model() = default;
  virtual torch::nn::Module& module() = 0;
  virtual double train_step(std::int64_t step) = 0;
  virtual std::int64_t parameter_count() const = 0;
};

class DemoModel final : public Model {
 public:
  explicit DemoModel(const tfdebug::demo::DemoConfig& config) : trainer_(config) {}
  torch::nn::Module& module() override { return trainer_.model(); }
  double train_step(std::int64_t /*step*/) override { return trainer_.train_step(); }
  std::int64_t parameter_count() const override { return trainer_.parameter_count(); }

 private:
  tfdebug::demo::DemoTrainer trainer_;
};

class ZooModel final : public Model {
 public:
  explicit ZooModel(const tfdebug::demo::ZooConfig& config) : trainer_(config) {}
  torch::nn::Module& module() override { return trainer_.model(); }
  double train_step(std::int64_t step) override {
    trainer_.before_step(step);
    return trainer_.train_step(step);
  }
  std::int64_t parameter_count() const override { return trainer_.parameter_count(); }

 private:
  tfdebug::demo::ZooTrainer trainer_;
};

// The callable a step hands to Attachment::step: a named type, so that bench/
// torch_instructions.sh's callgrind pattern for one_step does not match it (a lambda inside
// one_step would toggle the count off inside the step).
struct TrainStep {
  Model* model;
  std::int64_t step;
  double operator()() const { return model->train_step(step); }
};

struct Runner {
  Mode mode;
  std::unique_ptr<Model> trainer;
  std::unique_ptr<tfdebug::ObservationSink> sink{};
  std::vector<double> times{};
  std::vector<std::int64_t> steps_timed{};  // the step number of each time
  std::vector<bool> sampled{};              // whether that step observed ops (watch's samples)
  std::vector<double> round_medians{};      // the median step of each round
  std::vector<double> round_means{};        // the mean step of each round
  std::int64_t step = 0;
  std::int64_t ops = 0;  // ops the adapter's callback (or the profiler) saw, over the timed steps
  double samples_per_step = 0, tokens_per_step = 0;  // for the profiler's rates (0: unknown)

  void run(std::int64_t steps) {
    std::optional<tfdebug::torch::Attachment> debug;
    if (sink) {
      tfdebug::torch::AttachOptions options;
      if (mode == Mode::watch_fixed) options.watch_budget = 0;  // the fixed schedule
      if (g_no_samples) {
        options.watch_budget = 0;
        options.watch_every = std::int64_t{1} << 40;
      }
      options.replay = !g_no_replay;
      debug.emplace(tfdebug::torch::attach(*sink, trainer->module(), options));
    }
    // The profiler as `tfdebug demo --profile` constructs it; one per run of steps (only one may
    // run at a time, and the modes interleave), stopped outside the timed steps.
    std::optional<tfdebug::torch::Profiler> profiler;
    if (mode == Mode::profiler || mode == Mode::profiler_no_memory) {
      tfdebug::torch::ProfilerOptions options;
      options.samples_per_step = samples_per_step;
      options.tokens_per_step = tokens_per_step;
      options.memory = mode == Mode::profiler;
      profiler.emplace(trainer->module(), options);
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
      const double start = now();
      one_step(debug, profiler);
      times.push_back(now() - start);
      steps_timed.push_back(step);
      sampled.push_back(debug && debug->counters().last_step_sampled);
    }
    torch::autograd::AnomalyMode::set_enabled(false);
    if (empty) at::removeCallback(*empty);
    if (debug) ops += debug->counters().ops;
    if (profiler) ops += static_cast<std::int64_t>(profiler->stop().ops_seen);
  }
  // One training step, whatever the mode: what bench/torch_instructions.sh counts.
  [[gnu::noinline]] void one_step(std::optional<tfdebug::torch::Attachment>& debug,
                                  std::optional<tfdebug::torch::Profiler>& profiler) {
    if (debug) {
      debug->step(step, TrainStep{trainer.get(), step});
    } else {
      if (profiler) profiler->step_begin(step);
      trainer->train_step(step);
      if (profiler) profiler->step_end(step);
    }
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

// What measure() runs: a fresh model per mode, what the table's heading says of it, and the
// profiler's rates.
struct Subject {
  std::string label;
  std::function<std::unique_ptr<Model>()> make;
  std::string description;
  double samples_per_step = 0, tokens_per_step = 0;
};

Subject demo_subject(const char* label, const tfdebug::demo::DemoConfig& config) {
  char text[256];
  std::snprintf(text, sizeof text,
                "d_model %lld, %lld blocks, %lld heads, d_ff %lld, batch %lld x %lld tokens",
                static_cast<long long>(config.d_model), static_cast<long long>(config.layers),
                static_cast<long long>(config.heads), static_cast<long long>(config.d_ff),
                static_cast<long long>(config.batch), static_cast<long long>(2 * config.length));
  return {label, [config] { return std::make_unique<DemoModel>(config); }, text, double(config.batch),
          double(config.batch * 2 * config.length)};
}

Subject zoo_subject(tfdebug::demo::ZooModel model) {
  const std::string name(tfdebug::demo::zoo_model_name(model));
  return {name, [model] { return std::make_unique<ZooModel>(tfdebug::demo::ZooConfig{.model = model}); },
          "zoo model " + name + " (tools/tfdebug/demo/zoo.hpp)"};
}

// --split: where a mode's time goes between the steps that observed ops (watch's samples, Note
// [Watch budget] in src/torch/watch_schedule.hpp: ops, parameters and updates; every diagnose
// step) and the others (gradients only), each against the median of off's steps, and how many
// steps sampled.
bool g_split = false;
void print_split(const std::vector<Runner>& runners) {
  const double off = runners[0].median();
  std::printf("  median step, us:      sampled steps       other steps     sampled\n");
  for (const auto& r : runners) {
    std::vector<double> sampled, others;
    for (std::size_t i = 0; i < r.times.size(); ++i) (r.sampled[i] ? sampled : others).push_back(r.times[i]);
    auto column = [off](const std::vector<double>& times) {
      if (times.empty()) return std::string("        -         ");
      const double median = Runner::median_of(times);
      char text[32];
      std::snprintf(text, sizeof text, "%8.1f (%+6.1f)", 1e6 * median, 1e6 * (median - off));
      return std::string(text);
    };
    std::printf("  %-30s %s  %s  %4zu of %zu\n", mode_name(r.mode), column(sampled).c_str(),
                column(others).c_str(), sampled.size(), r.times.size());
  }
}

// What the rules found in each mode's run, under the table: a warning that is new (or back after
// a quiet spell) runs the steps after it in diagnose (RunConfig::diagnose_steps), so a watch row
// with findings paid for some diagnose steps too.
void print_findings(const std::vector<Runner>& runners) {
  for (const auto& r : runners) {
    const auto* session = dynamic_cast<const tfdebug::Session*>(r.sink.get());
    if (session == nullptr) continue;
    const auto findings = session->findings();
    if (findings.empty()) continue;
    std::printf("  %s found %zu:", mode_name(r.mode), findings.size());
    for (const auto& f : findings) {
      std::printf(" %s%s%s (step %lld, x%lld);", f.rule.c_str(), f.module.empty() ? "" : " ",
                  f.module.c_str(), static_cast<long long>(f.step), static_cast<long long>(f.count));
    }
    std::printf("\n");
  }
}

void measure(const Subject& subject, int rounds, std::int64_t steps) {
  std::vector<Runner> runners;
  for (Mode mode : g_modes) {
    Runner r{.mode = mode,
             .trainer = subject.make(),
             .samples_per_step = subject.samples_per_step,
             .tokens_per_step = subject.tokens_per_step};
    if (mode == Mode::watch_null) r.sink = std::make_unique<NullSink>(tfdebug::Tier::watch);
    if (mode == Mode::diagnose_null) r.sink = std::make_unique<NullSink>(tfdebug::Tier::diagnose);
    if (mode == Mode::watch || mode == Mode::watch_fixed || mode == Mode::diagnose ||
        mode == Mode::watch_metrics || mode == Mode::watch_slow_sink || mode == Mode::diagnose_breakpoints ||
        mode == Mode::diagnose_shapes || mode == Mode::diagnose_metrics) {
      tfdebug::RunConfig run;  // every rule at its default; no run directory
      run.tier = mode == Mode::diagnose || mode == Mode::diagnose_breakpoints ||
                         mode == Mode::diagnose_shapes || mode == Mode::diagnose_metrics
                     ? tfdebug::Tier::diagnose
                     : tfdebug::Tier::watch;
      auto session = std::make_unique<tfdebug::Session>(run);
      if (mode == Mode::watch_metrics || mode == Mode::watch_slow_sink || mode == Mode::diagnose_metrics)
        session->add_sink(std::make_shared<MetricsSink>(mode == Mode::watch_slow_sink));
      if (mode == Mode::diagnose_breakpoints) {
        // tfdebug::ide's Debugger with breakpoints that the demo never hits (docs/debugger.md): what
        // a user pays while waiting for one.
        auto debugger = std::make_shared<tfdebug::ide::Debugger>(
            [](const tfdebug::ide::Stop&) { return tfdebug::ide::Resume::continue_run; });
        for (const char* place : {"op aten::no_such_op*", "module no.such.module", "nan",
                                  "finding no_such_rule", "op aten::mm if abs_max > 1e30 and nan > 0"})
          debugger->add(tfdebug::ide::parse_breakpoint(place));
        session->add_sink(debugger);
      }
      // The shapes export (tfdebug::ide::ShapeRecorder, written by demo --out): every observation's
      // shapes recorded; nothing written (no path), the recording is what the run pays.
      if (mode == Mode::diagnose_shapes) session->add_sink(std::make_shared<tfdebug::ide::ShapeRecorder>());
      r.sink = std::move(session);
    }
    r.run(3);  // warm-up
    r.times.clear();
    r.steps_timed.clear();
    r.sampled.clear();
    r.round_medians.clear();
    r.round_means.clear();
    r.ops = 0;
    runners.push_back(std::move(r));
  }
  // Interleaved rounds, so that a noisy neighbour slows every mode alike.
  for (int round = 0; round < rounds; ++round) {
    for (auto& r : runners) {
      const std::size_t first = r.times.size();
      r.run(steps);
      const std::vector<double> last(r.times.begin() + std::ptrdiff_t(first), r.times.end());
      r.round_medians.push_back(Runner::median_of(last));
      r.round_means.push_back(std::accumulate(last.begin(), last.end(), 0.0) / double(last.size()));
    }
  }
  const double off = runners[0].median();
  // Paired: the median over rounds of this mode's round median (or mean) over off's in the same
  // round. The machine's speed drifts between rounds (shared cores); within a round the modes run
  // back to back, so the pairs cancel most of the drift.
  //
  // Note [Means, not medians]: a watch step that samples (every AttachOptions::watch_every steps)
  // costs more than the others, which cost nothing measurable. A round's median leaves the
  // sampled steps out, yet still moves: a small model's step times are bimodal (the zoo MLP's
  // 0.31 and 0.35 ms, by batch), so two slow steps in twenty can turn a median from one mode to
  // the other, 1.03-1.05x where no step but the sampled ones got slower. A round's mean is the
  // training time a user pays, sampled steps included, and a spike (a neighbour's burst) still
  // lands in one round, which the median over rounds then ignores.
  auto paired = [&runners](const Runner& r, bool means) {
    const auto& mine = means ? r.round_means : r.round_medians;
    const auto& off_rounds = means ? runners[0].round_means : runners[0].round_medians;
    std::vector<double> ratios;
    for (std::size_t i = 0; i < mine.size(); ++i) ratios.push_back(mine[i] / off_rounds[i]);
    return Runner::median_of(ratios);
  };
  std::printf("%s: %s, %lld parameters; %zu steps per mode\n", subject.label.c_str(),
              subject.description.c_str(), static_cast<long long>(runners[0].trainer->parameter_count()),
              runners[0].times.size());
  for (const auto& r : runners) {
    std::printf("  %-30s %9.3f ms  %6.3fx   paired %6.3fx   means %6.3fx", mode_name(r.mode),
                1e3 * r.median(), r.median() / off, paired(r, false), paired(r, true));
    if (r.ops > 0) std::printf("  %7.0f ops/step seen", double(r.ops) / double(r.times.size()));
    std::printf("\n");
  }
  if (g_split) print_split(runners);
  print_findings(runners);
  std::fflush(stdout);
}

// The one step a replay runs twice (Note [Replay]): a NaN planted in a zoo model's step `kBad`
// (in the batch, or a fully masked attention row), which GradScaler-style skipping survives; its
// time in watch with Attachment::step against the median watch step of the same run, over
// `rounds` fresh runs.
void measure_replay(tfdebug::demo::ZooModel model, int rounds) {
  constexpr std::int64_t kBad = 8;
  const auto fault = model == tfdebug::demo::ZooModel::encoder ? tfdebug::demo::ZooFault::masked_row
                                                               : tfdebug::demo::ZooFault::input_nan;
  std::vector<double> ratios, bad_ms, step_ms;
  std::int64_t replays = 0;
  for (int round = 0; round < rounds; ++round) {
    tfdebug::demo::ZooTrainer trainer(
        {.model = model, .fault = fault, .fault_step = kBad, .skip_nonfinite_steps = true});
    tfdebug::Session session(tfdebug::RunConfig{});
    auto debug = tfdebug::torch::attach(session, trainer.model());
    std::vector<double> times;
    double bad = 0;
    for (std::int64_t step = 0; step < kBad + 8; ++step) {
      const double start = now();
      debug.step(step, [&] { return trainer.train_step(step); });
      const double t = now() - start;
      if (step == kBad) {
        bad = t;
      } else if (step >= 3) {
        times.push_back(t);
      }
    }
    replays += debug.counters().replays;
    const double median = Runner::median_of(times);
    ratios.push_back(bad / median);
    bad_ms.push_back(1e3 * bad);
    step_ms.push_back(1e3 * median);
  }
  std::printf("  %-30s %9.3f ms  %6.3fx a watch step (%.3f ms); %lld replays in %d runs\n",
              "step replayed in diagnose", Runner::median_of(bad_ms), Runner::median_of(ratios),
              Runner::median_of(step_ms), static_cast<long long>(replays), rounds);
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
      "usage: torch_overhead [--model NAME] [--rounds N] [--steps N] [--default-only] [--no-anomaly]\n"
      "                      [--modes LIST] [--malloc fixed|default] [--split]\n"
      "                      [--clock wall|thread-cpu] [--no-samples] [--no-replay]\n"
      "  NAME: demo (default), mlp, cnn, encoder, gru, sigmoid or zoo (all five)\n"
      "  LIST: comma separated, from off, off-again, floor, watch-null, watch, watch-fixed, diagnose-null,\n"
      "  diagnose, anomaly, profiler, profiler-no-memory\n"
      "  --split: the median of watch's sampled steps and of the others, apart\n"
      "  --no-samples: watch samples its first step only; --no-replay: AttachOptions::replay off\n");
  return 2;
}

// Note [The BLAS core]
// The step times, and so every ratio, depend on the BLAS kernels LibTorch's matrix products run:
// OpenBLAS picks them by CPU model, and on a CPU it does not know (a VM's "Intel Xeon Processor"
// with AVX-512, 2026-12-07) it falls back to its generic Prescott kernels, which made the zoo
// MLP's step 0.70-0.85 ms where a recognised core ran it in 0.45-0.52 ms, and tfdebug's fixed
// cost a step a smaller fraction of it. So the bench prints the core (OPENBLAS_CORETYPE chooses
// one), found at run time: nothing links OpenBLAS itself.
std::string blas_core() {
  using Name = char* (*)();
  auto* name = reinterpret_cast<Name>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  if (name == nullptr) return "not OpenBLAS (or not loaded)";
  std::string core = std::string("OpenBLAS, core ") + name();
  if (const char* chosen = std::getenv("OPENBLAS_CORETYPE"))
    core += std::string(" (OPENBLAS_CORETYPE=") + chosen + ")";
  return core;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5;
  std::int64_t steps = 20;
  bool default_only = false;
  bool anomaly = true;
  std::string model = "demo";
  bool fixed_heap = true;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--default-only") == 0) {
      default_only = true;
    } else if (std::strcmp(argv[i], "--split") == 0) {
      g_split = true;
    } else if (std::strcmp(argv[i], "--no-samples") == 0) {
      g_no_samples = true;
    } else if (std::strcmp(argv[i], "--no-replay") == 0) {
      g_no_replay = true;
    } else if (std::strcmp(argv[i], "--no-anomaly") == 0) {
      anomaly = false;
    } else if (std::strcmp(argv[i], "--model") == 0 && has_value) {
      model = argv[++i];
      if (model != "demo" && model != "zoo" && !tfdebug::demo::parse_zoo_model(model)) {
        std::fprintf(stderr, "torch_overhead: --model: unknown model '%s'\n", model.c_str());
        return usage();
      }
    } else if (std::strcmp(argv[i], "--rounds") == 0 && has_value) {
      rounds = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--steps") == 0 && has_value) {
      steps = std::atoll(argv[++i]);
    } else if (std::strcmp(argv[i], "--clock") == 0 && has_value) {
      const std::string clock = argv[++i];
      if (clock != "wall" && clock != "thread-cpu") return usage();
      g_thread_cpu_clock = clock == "thread-cpu";
    } else if (std::strcmp(argv[i], "--malloc") == 0 && has_value) {
      const std::string heap = argv[++i];
      if (heap != "fixed" && heap != "default") return usage();
      fixed_heap = heap == "fixed";
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
  if (fixed_heap) {  // Note [A fixed heap]
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
  }
  at::set_num_threads(1);
  std::printf("BLAS: %s\n", blas_core().c_str());  // Note [The BLAS core]
  if (model != "demo") {
    std::vector<tfdebug::demo::ZooModel> models;
    if (model == "zoo") {
      models = {tfdebug::demo::ZooModel::mlp, tfdebug::demo::ZooModel::cnn, tfdebug::demo::ZooModel::encoder,
                tfdebug::demo::ZooModel::gru, tfdebug::demo::ZooModel::sigmoid};
    } else {
      models = {*tfdebug::demo::parse_zoo_model(model)};
    }
    for (auto m : models) {
      measure(zoo_subject(m), rounds, steps);
      if (!default_only) measure_replay(m, rounds);  // --default-only: the table alone
    }
    return 0;
  }
  tfdebug::demo::DemoConfig small;  // the demo's default size
  measure(demo_subject("default", small), rounds, steps);
  if (default_only) return 0;
  tfdebug::demo::DemoConfig large;
  large.d_model = 128;
  large.heads = 4;
  large.layers = 4;
  large.d_ff = 512;
  large.length = 16;
  measure(demo_subject("larger", large), rounds, std::max<std::int64_t>(1, steps / 4));
  return 0;
}
