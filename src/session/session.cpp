#include "tfdebug/session/session.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <exception>
#include <limits>
#include <mutex>
#include <string>
#include <unordered_map>

#include "monitors.hpp"
#include "report_json.hpp"
#include "step_metrics.hpp"
#include "tfdebug/session/console_sink.hpp"
#include "tfdebug/session/json_report_sink.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/histogram.hpp"
#include "tfdebug/core/stats.hpp"
#include "tfdebug/core/tensor.hpp"

namespace tfdebug {

namespace {

constexpr std::size_t kMaxHookErrors = 16;

// Unit activity of an output whose last dimension holds the units: a unit is active when any of
// its values over the batch and token dimensions is not +-0. That is column_nonzero over the
// [rows, units] view, in one core pass with no copy for contiguous outputs (a transposed
// [units, rows] view would be strided, which column_nonzero copies).
std::vector<std::uint8_t> unit_activity(TensorView value) {
  const std::int64_t units = value.shape(value.rank() - 1);
  const std::int64_t rows = value.numel() / units;
  Tensor copy;
  if (!value.is_contiguous()) {
    copy = Tensor::copy_of(value);
    value = copy.view();
  }
  std::vector<std::uint8_t> active(static_cast<std::size_t>(units), 0);
  column_nonzero(TensorView(value.data(), value.dtype(), {rows, units}), active.data());
  return active;
}

// Fraction of the finite outputs of a tanh or sigmoid within `margin` of its asymptotes, from
// fixed histogram bins whose outer bins are the tails (the margin is rounded to a whole bin); for
// GELU, the fraction of its finite inputs below -cutoff.
double saturated_fraction(const Observation& o, detail::SaturationKind kind, const SaturationRule& rule,
                          std::int64_t finite) {
  if (kind == detail::SaturationKind::gelu) {
    const Histogram h = histogram_fixed(*o.input, 1, -rule.gelu_cutoff, -rule.gelu_cutoff + 1.0);
    const std::int64_t inputs_finite = h.counts.front() + h.below + h.above;
    return inputs_finite == 0 ? 0.0 : static_cast<double>(h.below) / static_cast<double>(inputs_finite);
  }
  const TensorView& value = o.value;
  const double margin = rule.margin;
  const bool tanh = kind == detail::SaturationKind::tanh;
  const double lo = tanh ? -1.0 : 0.0;
  const int bins = std::max(2, static_cast<int>(std::lround(1.0 / margin * (tanh ? 2.0 : 1.0))));
  const Histogram h = histogram_fixed(value, bins, lo, 1.0);
  if (finite == 0) return 0.0;
  const std::int64_t tails = h.counts.front() + h.counts.back() + h.below + h.above;
  return static_cast<double>(tails) / static_cast<double>(finite);
}

// Note [Light outputs]
// A diagnose step hands the Session every op output (~550 tensors, 2 million values a step on
// the demo model), and the full statistics of each cost as much as a cheap op: the stats kernel
// counts every class of value and sums moments (~22 GB/s), and took ~0.3x of the demo's step on
// its own. The rules on op outputs need less: non-finite values (then the exact counts, taken
// from the full statistics of that one tensor), whether any value is zero (dead units: the
// per-unit pass runs only then), and the range. compute_extremes gives those several times
// faster. The full statistics still come every flight_recorder_moments_every steps (and after
// the first error, until the flight recorder is written), so the flight recorder has means and
// standard deviations of every op on those steps.
// The values and updates of vectors (biases, norm scales: rank < 2) are light too: the parameter
// rules that read moments (weight scale, update ratio, spectral norm) take weight matrices only,
// so what those observations feed is the non-finite check and the flight recorder, as for an op
// output. Gradients, and the updates of weight matrices, need their norm besides (the gradient
// rules sum each layer's, the update-ratio rule divides by the weight's): compute_range_l2 gives
// the range, NaN/Inf and the L2 norm in one pass, and the rules run on those. Only the values of
// weight matrices (weight scale: the standard deviation; spectral norm) get the full statistics
// on every step.
//
// Stats from a one-pass summary of finite values: count, range and abs-max; the moments are NaN
// (not measured) and the counts of zeros, signs and subnormals 0.
Stats summary_stats(DType dtype, const Extremes& e) {
  Stats s;
  s.dtype = dtype;
  s.count = e.count;
  s.min = e.min;
  s.max = e.max;
  s.abs_max = e.abs_max;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  s.min_abs_nonzero = nan;
  s.mean = nan;
  s.variance = nan;
  s.std = nan;
  s.l1 = nan;
  s.l2 = nan;
  s.headroom = nan;
  return s;
}

}  // namespace

struct Session::State : detail::Emitter {
  explicit State(RunConfig c)
      : config(std::move(c)),
        monitors(config),
        metrics(config),
        recorder(config.flight_recorder_steps, config.flight_recorder_max_ops) {}

  // detail::Emitter, called with `mutex` held.
  void emit(Finding finding) override;
  void add_evidence(std::string_view rule, std::string_view module, std::string_view op, std::string_view key,
                    double delta) override;
  void write_flight_recorder();
  RunSummary summary() const;

  RunConfig config;
  mutable std::mutex mutex;
  detail::Monitors monitors;
  detail::MetricsCollector metrics;
  FlightRecorder recorder;
  std::vector<std::shared_ptr<Sink>> sinks;
  std::vector<Finding> findings;
  std::unordered_map<std::string, std::size_t> finding_index;  // rule/severity/module/op
  std::int64_t dropped_findings = 0;
  std::int64_t steps = 0;
  std::optional<std::int64_t> first_step;
  std::int64_t last_step = 0;
  std::int64_t observations = 0;
  std::vector<std::string> hook_errors;
  std::optional<Finding> first_error;
  std::optional<std::int64_t> dump_at_step;
  std::optional<std::filesystem::path> dump_path;
  std::optional<RunSummary> finished;
  std::atomic<std::int64_t> current_step{0};
  std::atomic<std::int64_t> diagnose_until{-1};
  std::atomic<bool> diagnose_armed{false};
  std::atomic<bool> error_found{false};
  std::atomic<bool> histograms_wanted{false};  // a sink's wants_histograms()
  std::atomic<bool> metrics_wanted{false};     // a sink's wants_step_metrics()
  std::atomic<bool> moments_wanted{false};     // full statistics of outputs until the dump
};

namespace {
std::string finding_key(std::string_view rule, Severity severity, std::string_view module,
                        std::string_view op) {
  return std::string(rule) + '\x1f' + std::string(severity_name(severity)) + '\x1f' +
         detail::make_key(module, op);
}
}  // namespace

void Session::State::emit(Finding finding) {
  const std::string key = finding_key(finding.rule, finding.severity, finding.module, finding.op);
  const auto known = finding_index.find(key);
  // Tier escalation: the rest of this step and the next diagnose_steps steps, for a finding
  // that is new or comes back after a quiet spell longer than that. A warning that holds every
  // step (a converged model's tiny updates) says nothing new after its first window, and must
  // not keep a watch run in diagnose for good.
  const bool news = known == finding_index.end() ||
                    finding.step - findings[known->second].last_step > config.diagnose_steps;
  if (finding.severity >= Severity::warning && news) {
    const std::int64_t until = finding.step + config.diagnose_steps;
    if (until > diagnose_until.load(std::memory_order_relaxed))
      diagnose_until.store(until, std::memory_order_relaxed);
    diagnose_armed.store(true, std::memory_order_relaxed);
  }
  if (finding.severity == Severity::error && !first_error) {
    first_error = finding;
    error_found.store(true, std::memory_order_release);
    dump_at_step = finding.step + config.flight_recorder_after;
    moments_wanted.store(true, std::memory_order_relaxed);  // the window's last steps in full
  }
  if (known != finding_index.end()) {
    Finding& kept = findings[known->second];
    if (finding.step != kept.last_step) ++kept.count;  // counted once per step
    kept.last_step = std::max(kept.last_step, finding.step);
    return;
  }
  if (findings.size() >= static_cast<std::size_t>(config.max_findings)) {
    ++dropped_findings;
    return;
  }
  finding_index.emplace(key, findings.size());
  findings.push_back(std::move(finding));
  for (const auto& sink : sinks) sink->on_finding(findings.back());
}

void Session::State::add_evidence(std::string_view rule, std::string_view module, std::string_view op,
                                  std::string_view key, double delta) {
  const auto it = finding_index.find(finding_key(rule, Severity::error, module, op));
  if (it == finding_index.end()) return;
  EvidenceValue* value = findings[it->second].find_evidence(key);
  if (double* number = value != nullptr ? std::get_if<double>(value) : nullptr) *number += delta;
}

void Session::State::write_flight_recorder() {
  dump_at_step.reset();
  moments_wanted.store(false, std::memory_order_relaxed);
  if (config.run_dir.empty() || !first_error) return;
  std::filesystem::create_directories(config.run_dir);
  const std::filesystem::path path = config.run_dir / "flight_recorder.json";
  // The kept finding, when there is one, carries evidence updated since it tripped
  // (nonfinite's propagators are counted at end_step).
  const auto kept = finding_index.find(
      finding_key(first_error->rule, first_error->severity, first_error->module, first_error->op));
  const Finding& trigger = kept != finding_index.end() ? findings[kept->second] : *first_error;
  detail::write_flight_recorder_json(path, trigger, recorder.steps());
  dump_path = path;
}

RunSummary Session::State::summary() const {
  RunSummary s;
  s.steps = steps;
  s.first_step = first_step.value_or(0);
  s.last_step = last_step;
  s.observations = observations;
  s.findings = findings;
  s.spectral = monitors.spectral();
  s.flight_recorder = dump_path;
  s.dropped_findings = dropped_findings;
  s.untracked_observations = monitors.untracked();
  s.dropped_op_summaries = recorder.dropped_ops();
  s.hook_errors = hook_errors;
  s.stopped = config.stop_on_error && error_found.load();
  return s;
}

Session::Session(RunConfig config) {
  config.validate();
  state_ = std::make_unique<State>(std::move(config));
  if (!state_->config.run_dir.empty())
    state_->sinks.push_back(std::make_shared<JsonReportSink>(state_->config.run_dir / "report.json"));
  if (state_->config.console) state_->sinks.push_back(std::make_shared<ConsoleSink>());
}

Session::~Session() {
  try {
    finish();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tfdebug: could not finish the run: %s\n", e.what());
  }
}

void Session::add_sink(std::shared_ptr<Sink> sink) {
  const std::lock_guard lock(state_->mutex);
  if (sink->wants_histograms()) state_->histograms_wanted.store(true, std::memory_order_relaxed);
  if (sink->wants_step_metrics() || sink->wants_histograms())
    state_->metrics_wanted.store(true, std::memory_order_relaxed);
  state_->sinks.push_back(std::move(sink));
}

void Session::begin_step(std::int64_t step) {
  const std::lock_guard lock(state_->mutex);
  state_->current_step.store(step, std::memory_order_relaxed);
  if (!state_->first_step) state_->first_step = step;
  state_->recorder.begin_step(step);
}

std::optional<bool> Session::observe(const Observation& observation) {
  State& s = *state_;
  try {
    // Measurements that read tensor memory run outside the lock, so observers on several
    // threads scan in parallel; only the rule state is serialised.
    detail::Measurements m;
    StatsOptions options;
    if (s.config.target_dtype && s.config.rules.headroom.enabled && is_floating(observation.value.dtype()))
      options.target = s.config.target_dtype;
    // Note [Light outputs]: most op outputs get the one-pass summary; see
    // RunConfig::flight_recorder_moments_every.
    const bool vector_value = (observation.role == Role::parameter || observation.role == Role::update) &&
                              observation.value.rank() < 2;
    const bool light = (observation.role == Role::output || observation.role == Role::gradient ||
                        observation.role == Role::update || vector_value) &&
                       !options.target && observation.step % s.config.flight_recorder_moments_every != 0 &&
                       !s.metrics_wanted.load(std::memory_order_relaxed) &&
                       !s.moments_wanted.load(std::memory_order_relaxed);
    // Gradients and the updates of weight matrices: the rules read their norm (Note [Light outputs]).
    const bool norm_light = light && (observation.role == Role::gradient ||
                                      (observation.role == Role::update && observation.value.rank() >= 2));
    const bool wants_units = s.monitors.wants_unit_activity(observation);
    const auto saturation = s.monitors.saturation_kind(observation);
    // Note [Light outputs]: a finite output that no rule reads further (most backward and
    // optimizer outputs) only leaves its summary in the flight recorder.
    // (light: no sink wants per-step metrics or histograms either.)
    if (light && !norm_light && !wants_units && saturation == detail::SaturationKind::none) {
      const Extremes e = compute_range(observation.value);  // no rule asks whether a value is 0
      if (!e.nonfinite) {
        const Stats summary = summary_stats(observation.value.dtype(), e);
        const std::lock_guard lock(s.mutex);
        ++s.observations;
        s.recorder.record(observation, summary);
        return true;
      }
    }
    bool has_zero = false;
    if (norm_light) {
      const Extremes e = compute_range_l2(observation.value);
      if (!e.nonfinite && std::isfinite(e.l2)) {
        m.stats = summary_stats(observation.value.dtype(), e);
        m.stats.l2 = e.l2;
      } else {  // the counts the finding reports, or a norm beyond f64's squares
        m.stats = compute_stats(observation.value, options);
        has_zero = m.stats.zero > 0;
      }
    } else if (light) {
      const Extremes e = compute_extremes(observation.value);
      if (e.nonfinite) {
        m.stats = compute_stats(observation.value, options);  // the counts the finding reports
        has_zero = m.stats.zero > 0;
      } else {
        m.stats = summary_stats(observation.value.dtype(), e);
        has_zero = e.zero;
      }
    } else {
      m.stats = compute_stats(observation.value, options);
      has_zero = m.stats.zero > 0;
    }
    // A non-finite output whose producer answers only on demand: ask it now, outside the lock.
    Observation resolved = observation;
    if (m.stats.nonfinite() > 0 && observation.role == Role::output) {
      resolved.inputs_finite = observation.resolve_inputs_finite();
    }
    resolved.inputs = nullptr;
    if (wants_units) {
      // No value is +-0 (most op outputs): every unit is active, no second pass needed.
      if (!has_zero && m.stats.nonfinite() == 0)
        m.all_units_active = observation.value.shape(observation.value.rank() - 1);
      else
        m.unit_active = unit_activity(observation.value);
    }
    if (saturation != detail::SaturationKind::none)
      m.saturated_fraction =
          saturated_fraction(observation, saturation, s.config.rules.saturation, m.stats.finite());
    std::optional<std::vector<double>> spectral_start;
    bool histogram = false;
    const bool histogram_step =
        s.histograms_wanted.load(std::memory_order_relaxed) && s.metrics.histogram_step(observation);
    if ((observation.role == Role::parameter && m.stats.nonfinite() == 0) || histogram_step) {
      const std::lock_guard lock(s.mutex);
      if (observation.role == Role::parameter && m.stats.nonfinite() == 0)
        spectral_start = s.monitors.spectral_due(observation);
      histogram = histogram_step && s.metrics.reserve_histogram(observation);
    }
    // A second pass over the tensor, on histogram steps only (TensorFlow's fixed buckets, so the
    // outputs of one module add up into one histogram).
    if (histogram) m.histogram = histogram_tensorflow(observation.value).counts;
    if (spectral_start) {
      SpectralOptions options_spectral;
      options_spectral.max_iterations = s.config.rules.spectral.max_iterations;
      options_spectral.tolerance = s.config.rules.spectral.tolerance;
      options_spectral.start = std::move(*spectral_start);
      m.spectral = estimate_spectral_norm(observation.value, options_spectral);
    }
    const std::lock_guard lock(s.mutex);
    ++s.observations;
    s.recorder.record(resolved, m.stats);
    s.monitors.observe(resolved, m, s);
    if (s.metrics_wanted.load(std::memory_order_relaxed)) s.metrics.observe(resolved, m);
    return m.stats.nonfinite() == 0;
  } catch (const std::exception& e) {
    // Note: nothing throws into the producer's (the user's) loop; the failure is reported.
    const std::lock_guard lock(s.mutex);
    if (s.hook_errors.size() < kMaxHookErrors)
      s.hook_errors.push_back(std::string(observation.module) + " " + std::string(observation.op) + ": " +
                              e.what());
  }
  return std::nullopt;
}

void Session::end_step(std::int64_t step, std::optional<double> loss) {
  State& s = *state_;
  const std::lock_guard lock(s.mutex);
  s.monitors.end_step(step, loss, s);
  if (s.metrics_wanted.load(std::memory_order_relaxed)) {
    const StepMetrics metrics = s.metrics.end_step(step, loss);
    for (const auto& sink : s.sinks) {
      try {
        sink->on_step(metrics);
      } catch (const std::exception& e) {
        // Note: a sink that cannot write (a full disk) must not stop training; it is reported.
        if (s.hook_errors.size() < kMaxHookErrors) s.hook_errors.push_back(std::string("sink: ") + e.what());
      }
    }
  }
  s.recorder.end_step(loss);
  ++s.steps;
  if (!s.first_step) s.first_step = step;
  s.last_step = step;
  if (s.dump_at_step && step >= *s.dump_at_step) {
    try {
      s.write_flight_recorder();
    } catch (const std::exception& e) {
      if (s.hook_errors.size() < kMaxHookErrors)
        s.hook_errors.push_back(std::string("flight recorder: ") + e.what());
    }
  }
}

Tier Session::tier() const noexcept {
  const State& s = *state_;
  if (s.diagnose_armed.load(std::memory_order_relaxed) &&
      s.current_step.load(std::memory_order_relaxed) <= s.diagnose_until.load(std::memory_order_relaxed))
    return Tier::diagnose;
  return s.config.tier;
}

bool Session::should_stop() const noexcept {
  return state_->config.stop_on_error && state_->error_found.load(std::memory_order_acquire);
}

RunSummary Session::finish() {
  State& s = *state_;
  const std::lock_guard lock(s.mutex);
  if (s.finished) return *s.finished;
  if (s.dump_at_step) s.write_flight_recorder();  // the run ended inside the window
  s.finished = s.summary();
  for (const auto& sink : s.sinks) sink->on_run_end(*s.finished);
  return *s.finished;
}

std::vector<Finding> Session::findings() const {
  const std::lock_guard lock(state_->mutex);
  return state_->findings;
}

std::vector<RecordedStep> Session::flight_recorder() const {
  const std::lock_guard lock(state_->mutex);
  return state_->recorder.steps();
}

const RunConfig& Session::config() const noexcept {
  return state_->config;
}

}  // namespace tfdebug
