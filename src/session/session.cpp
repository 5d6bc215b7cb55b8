#include "tfdebug/session/session.hpp"

#include <algorithm>
#include <any>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <limits>
#include <mutex>
#include <string>
#include <unordered_map>

#include "report_json.hpp"
#include "rules/keyed_state.hpp"
#include "sink_queue.hpp"
#include "step_metrics.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/histogram.hpp"
#include "tfdebug/core/stats.hpp"
#include "tfdebug/session/console_sink.hpp"
#include "tfdebug/session/json_report_sink.hpp"
#include "tfdebug/session/rule_registry.hpp"
#include "unit_activity.hpp"

namespace tfdebug {

namespace {

constexpr std::size_t kMaxHookErrors = 16;
constexpr std::size_t kTables = 4 * 3;  // Role x Phase

std::size_t table_of(Role role, Phase phase) {
  return std::size_t(role) * 3 + std::size_t(phase);
}

// Note [Light outputs]
// A diagnose step hands the Session every op output (~550 tensors, 2 million values a step on
// the demo model), and the full statistics of each cost as much as a cheap op: the stats kernel
// counts every class of value and sums moments (~22 GB/s), and took ~0.3x of the demo's step on
// its own. The rules need less, and each says what (Rule::needs, a Need): most observations are
// read only for NaN/Inf (rule nonfinite: then the exact counts, from the full statistics of that
// one tensor), dead units need to know whether any value is zero (the per-unit pass runs only
// then), gradients and the updates of weight matrices their L2 norm, the weight-scale rule the
// standard deviation of weight matrices. So the Session runs the cheapest kernel that gives what
// every rule reading the observation needs: compute_range (NaN/Inf and the range) or
// compute_extremes (also zeros), several times faster than the full statistics, or
// compute_range_l2 (the range and the L2 norm in one pass), or compute_stats. A finite
// observation that no rule reads further only leaves its summary in the flight recorder. The full
// statistics still come every flight_recorder_moments_every steps (and after the first error,
// until the flight recorder is written, and on the histogram steps of a sink that wants
// histograms), so the flight recorder has means and standard deviations of every op on those
// steps. A sink that wants per-step metrics adds what they read to what the rules need (a forward
// output's zeros counted by compute_range_zeros, the norms), and the metrics take their values
// from the one measurement the rules read (MetricInput), never from a second pass.
//
// Stats from a one-pass summary of finite values: count, range and abs-max; the moments are NaN
// (not measured) and the counts of signs and subnormals 0, and of zeros 0 unless
// compute_range_zeros counted them (then set by the caller).
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
  s.range_used = nan;
  return s;
}

// A rule that reads an observation, what it needs, and what its measure() returned.
struct Reader {
  Rule* rule = nullptr;
  Needs needs;
  std::any measured;
};

// What to measure of an observation (Session::State::plan).
struct Plan {
  Need need = Need::none;   // the most any reader needs
  bool zeros = false;       // some reader needs Need::zeros (compute_range_l2 does not count them)
  bool full = false;        // the Session wants the full statistics itself (Note [Light outputs])
  bool histogram = false;   // a histogram step of the per-step metrics
  bool zero_count = false;  // the per-step metrics count a forward output's zeros (Stats::zero)
};

// What was measured (Session::State::measure).
struct Measured {
  Stats stats;
  bool has_zero = false;
  std::vector<std::int64_t> histogram;  // TensorFlow buckets, on histogram steps
};

}  // namespace

struct Session::State final : RuleContext {
  explicit State(RunConfig c)
      : config(std::move(c)),
        rules(RuleRegistry::instance().instantiate(config)),
        metrics(config),
        recorder(config.flight_recorder_steps, config.flight_recorder_max_ops) {
    tier.store(config.tier);
    build_tables();
  }

  // RuleContext, called with `mutex` held.
  void emit(Finding finding) override;
  void add_evidence(std::string_view rule, std::string_view module, std::string_view op, std::string_view key,
                    double delta) override;

  // Which rules read which role and phase, in registration order.
  void build_tables();
  // What to measure of `o`, and which rules read it (into `readers`). No lock.
  Plan plan(const Observation& o, std::vector<Reader>& readers) const;
  // The statistics the plan asks for (the stats kernel; no lock).
  Measured measure(const Observation& o, const Plan& plan) const;
  // Under the lock: the flight recorder, the rules that read the observation, the metrics.
  void dispatch(const Observation& o, const Measured& m, std::vector<Reader>& readers);

  // Note [Pause channel]: whether a pausing sink asks to stop at `o`; remembers which, for pause().
  bool ask_pause(const Observation& o, const Stats& stats, const std::vector<Finding>& raised);
  void write_flight_recorder();
  // Steps [first, until] in diagnose; a window already open is extended. With `mutex` held.
  void open_diagnose(std::int64_t first, std::int64_t until) {
    const bool open =
        diagnose_armed.load(std::memory_order_relaxed) &&
        current_step.load(std::memory_order_relaxed) <= diagnose_until.load(std::memory_order_relaxed);
    diagnose_from.store(open ? std::min(diagnose_from.load(std::memory_order_relaxed), first) : first,
                        std::memory_order_relaxed);
    if (!open || until > diagnose_until.load(std::memory_order_relaxed))
      diagnose_until.store(until, std::memory_order_relaxed);
    diagnose_armed.store(true, std::memory_order_relaxed);
  }
  RunSummary summary() const;
  void hook_error(std::string text) {
    if (hook_errors.size() < kMaxHookErrors) hook_errors.push_back(std::move(text));
  }

  RunConfig config;
  mutable std::mutex mutex;
  std::vector<std::unique_ptr<Rule>> rules;
  // The rules that read a role and phase, in registration order.
  struct Reading {
    Rule* rule = nullptr;
    bool only_nonfinite = false;  // reads it only when some value is NaN/Inf: needs() is not asked
  };
  struct Table {
    std::vector<Reading> readers;
    bool any_nonfinite = false;  // some reader is only_nonfinite
  };
  std::array<Table, kTables> tables;
  bool rules_fixed = false;  // the first step began: add_rule is closed
  detail::MetricsCollector metrics;
  FlightRecorder recorder;
  std::vector<std::shared_ptr<Sink>> sinks;                // synchronous: called under the lock
  std::vector<std::unique_ptr<detail::SinkQueue>> queues;  // queued (Note [Sink delivery])
  std::vector<std::shared_ptr<Sink>> pausers;              // wants_pauses() (Note [Pause channel])
  std::atomic<bool> pauses_wanted{false};
  std::vector<Finding>* capture = nullptr;  // while dispatching for a pausing sink: every finding emitted
  std::chrono::milliseconds sink_timeout() const {
    return std::chrono::milliseconds(std::int64_t(config.sink_finish_timeout_s * 1000));
  }
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
  // Note [Report as it goes]: the run_dir's report.json, rewritten while the run goes on.
  std::shared_ptr<JsonReportSink> report;
  bool report_urgent = false;  // a new finding (or the flight recorder's dump) is not in it yet
  std::chrono::steady_clock::time_point report_written{};
  // With `mutex` held: rewrites report.json ("complete": false) when `urgent` things wait or the
  // last rewrite is kReportEvery old; a failure is a hook error, training goes on.
  void update_report(bool at_step_end);
  std::atomic<std::int64_t> current_step{0};
  std::atomic<Tier> tier{Tier::watch};         // the run's (RunConfig::tier, set_tier)
  std::atomic<std::int64_t> diagnose_from{0};  // steps [from, until] observe in diagnose, once armed
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

void Session::State::build_tables() {
  for (Table& t : tables) t = Table{};
  for (const auto& rule : rules) {
    const Interest interest = rule->interest();
    for (const Role role : {Role::output, Role::parameter, Role::gradient, Role::update}) {
      for (const Phase phase : {Phase::forward, Phase::backward, Phase::optimizer}) {
        if (!interest.reads(role, phase)) continue;
        Table& t = tables[table_of(role, phase)];
        t.readers.push_back({rule.get(), interest.is_only_nonfinite()});
        t.any_nonfinite = t.any_nonfinite || interest.is_only_nonfinite();
      }
    }
  }
}

Plan Session::State::plan(const Observation& o, std::vector<Reader>& readers) const {
  Plan p;
  const Table& t = tables[table_of(o.role, o.phase)];
  if (t.any_nonfinite) p.need = Need::nonfinite;
  for (const Reading& r : t.readers) {
    if (r.only_nonfinite) {
      readers.push_back({r.rule, {Need::nonfinite}, {}});
      continue;
    }
    const Needs needs = r.rule->needs(o);
    if (needs.stats == Need::none && !needs.measure) continue;
    readers.push_back({r.rule, needs, {}});
    p.need = std::max(p.need, needs.stats);
    p.zeros = p.zeros || needs.stats == Need::zeros;
  }
  p.full =
      o.step % config.flight_recorder_moments_every == 0 || moments_wanted.load(std::memory_order_relaxed);
  if (metrics_wanted.load(std::memory_order_relaxed)) {
    // The step metrics (step_metrics.cpp) read a forward output's count, range and number of
    // zeros (compute_range_zeros), the norm of a gradient and of a weight matrix and its update;
    // nothing of a backward op's output, a bias or a norm scale.
    if (o.role == Role::gradient ||
        ((o.role == Role::parameter || o.role == Role::update) && o.value.rank() >= 2)) {
      p.need = std::max(p.need, Need::norm);
    } else if (o.role == Role::output && o.phase == Phase::forward) {
      p.need = std::max(p.need, Need::zeros);
      p.zero_count = true;
    }
  }
  p.histogram = histograms_wanted.load(std::memory_order_relaxed) && metrics.histogram_step(o);
  // A histogram's sum and sum of squares come from the mean and the norm.
  p.full = p.full || p.histogram;
  return p;
}

Measured Session::State::measure(const Observation& o, const Plan& plan) const {
  Measured m;
  const TensorView& v = o.value;
  StatsOptions options;
  if (plan.need == Need::target && config.target_dtype && is_floating(v.dtype()))
    options.target = config.target_dtype;
  const auto full = [&] {
    m.stats = compute_stats(v, options);
    m.has_zero = m.stats.zero > 0;
  };
  if (plan.full || plan.need >= Need::moments ||
      (plan.need == Need::norm && (plan.zeros || plan.zero_count))) {
    full();
  } else if (plan.need == Need::norm) {
    const Extremes e = compute_range_l2(v);
    if (e.nonfinite || !std::isfinite(e.l2)) {
      full();  // the counts the finding reports, or a norm beyond f64's squares
    } else {
      m.stats = summary_stats(v.dtype(), e);
      m.stats.l2 = e.l2;
    }
  } else if (plan.need == Need::zeros && plan.zero_count) {
    const Extremes e = compute_range_zeros(v);
    if (e.nonfinite) {
      full();  // the counts the finding reports
    } else {
      m.stats = summary_stats(v.dtype(), e);
      m.stats.zero = e.zeros;
      m.has_zero = e.zeros > 0;
    }
  } else if (plan.need == Need::zeros) {
    const Extremes e = compute_extremes(v);
    if (e.nonfinite) {
      full();  // the counts the finding reports
    } else {
      m.stats = summary_stats(v.dtype(), e);
      m.has_zero = e.zero;
    }
  } else {
    const Extremes e = compute_range(v);  // no rule asks whether a value is 0
    if (e.nonfinite)
      full();
    else
      m.stats = summary_stats(v.dtype(), e);
  }
  return m;
}

void Session::State::dispatch(const Observation& o, const Measured& m, std::vector<Reader>& readers) {
  TFDEBUG_HOOK_CHECK(m.stats.count == o.value.numel(), "the statistics do not cover the observed tensor");
  ++observations;
  recorder.record(o, m.stats);
  const bool nonfinite = m.stats.nonfinite() > 0;
  const detail::UnitActivity* units = nullptr;
  for (Reader& r : readers) {
    if (r.needs.stats == Need::nonfinite && !r.needs.measure && !nonfinite) continue;
    r.rule->observe(RuleInput{o, m.stats, m.has_zero, r.measured}, *this);
    if (units == nullptr) units = std::any_cast<detail::UnitActivity>(&r.measured);
  }
  if (metrics_wanted.load(std::memory_order_relaxed))
    metrics.observe(o, detail::MetricInput{m.stats, units, m.histogram.empty() ? nullptr : &m.histogram});
}

void Session::State::emit(Finding finding) {
  if (capture != nullptr) capture->push_back(finding);
  const std::string key = finding_key(finding.rule, finding.severity, finding.module, finding.op);
  const auto known = finding_index.find(key);
  // Tier escalation: the rest of this step and the next diagnose_steps steps, for a finding
  // that is new or comes back after a quiet spell longer than that. A warning that holds every
  // step (a converged model's tiny updates) says nothing new after its first window, and must
  // not keep a watch run in diagnose for good.
  const bool news = known == finding_index.end() ||
                    finding.step - findings[known->second].last_step > config.diagnose_steps;
  if (finding.severity >= Severity::warning && news)
    open_diagnose(finding.step, finding.step + config.diagnose_steps);
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
    if (finding.step > kept.step && (!kept.latest || finding.step >= kept.latest->step))
      kept.latest = Occurrence{finding.step, finding.message, finding.evidence, finding.magnitude};
    const double worst = kept.worst ? kept.worst->magnitude : kept.magnitude;
    if (finding.magnitude > worst ||
        (std::isnan(worst) && !std::isnan(finding.magnitude) && finding.step > kept.step))
      kept.worst = Occurrence{finding.step, std::move(finding.message), std::move(finding.evidence),
                              finding.magnitude};
    return;
  }
  if (findings.size() >= static_cast<std::size_t>(config.max_findings)) {
    ++dropped_findings;
    return;
  }
  finding_index.emplace(key, findings.size());
  findings.push_back(std::move(finding));
  report_urgent = true;
  update_report(/*at_step_end=*/false);
  for (const auto& sink : sinks) {
    try {
      sink->on_finding(findings.back());
    } catch (const std::exception& e) {
      hook_error(std::string("sink: ") + e.what());
    }
  }
  for (const auto& queue : queues) queue->finding(findings.back());
}

void Session::State::add_evidence(std::string_view rule, std::string_view module, std::string_view op,
                                  std::string_view key, double delta) {
  const auto it = finding_index.find(finding_key(rule, Severity::error, module, op));
  if (it == finding_index.end()) return;
  EvidenceValue* value = findings[it->second].find_evidence(key);
  if (double* number = value != nullptr ? std::get_if<double>(value) : nullptr) *number += delta;
}

// Note [Report as it goes]: a run that is killed (SIGKILL, the OOM killer, a node lost) never
// reaches finish(), so report.json is also rewritten while the run goes on, with "complete":
// false, each time through a temporary file and a rename (write_text_file): at any moment the
// file is a whole report, the last one written. When: a new finding at once, unless the last
// rewrite is younger than kReportEvery (then at the end of its step, so a step that raises many
// findings writes once); anything else that changed (counts, evidence, the step counter) at the
// end of a step once kReportEvery has passed. So the cost is bounded by max_findings + one
// rewrite per kReportEvery, whatever the step rate, and a kill loses at most the findings of the
// step in progress after its first one, and the counts of the last kReportEvery.
namespace {
constexpr std::chrono::milliseconds kReportEvery{1000};
}  // namespace

void Session::State::update_report(bool at_step_end) {
  if (!report || finished) return;
  const auto now = std::chrono::steady_clock::now();
  const bool due = now - report_written >= kReportEvery;
  if (!(report_urgent && (at_step_end || due)) && !(at_step_end && due)) return;
  report_written = now;
  report_urgent = false;
  try {
    RunSummary progress = summary();
    progress.complete = false;
    report->write(progress);
  } catch (const std::exception& e) {
    hook_error(std::string("report.json: ") + e.what());
  }
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
  report_urgent = true;
}

RunSummary Session::State::summary() const {
  RunSummary s;
  s.steps = steps;
  s.first_step = first_step.value_or(0);
  s.last_step = last_step;
  s.observations = observations;
  s.findings = findings;
  for (const auto& rule : rules) rule->summarize(s);
  s.flight_recorder = dump_path;
  s.dropped_findings = dropped_findings;
  s.dropped_op_summaries = recorder.dropped_ops();
  s.hook_errors = hook_errors;
  s.stopped = config.stop_on_error && error_found.load();
  return s;
}

Session::Session(RunConfig config) {
  config.validate();
  state_ = std::make_unique<State>(std::move(config));
  if (!state_->config.run_dir.empty()) {
    state_->report =
        std::make_shared<JsonReportSink>(state_->config.run_dir / "report.json", state_->config.entries());
    state_->sinks.push_back(state_->report);
  }
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
  if (!sink) throw Error("Session::add_sink: no sink");
  const std::lock_guard lock(state_->mutex);
  if (sink->wants_histograms()) state_->histograms_wanted.store(true, std::memory_order_relaxed);
  if (sink->wants_step_metrics() || sink->wants_histograms())
    state_->metrics_wanted.store(true, std::memory_order_relaxed);
  if (sink->wants_pauses()) {
    state_->pausers.push_back(sink);
    state_->pauses_wanted.store(true, std::memory_order_release);
  }
  if (sink->delivery() == Delivery::synchronous)
    state_->sinks.push_back(std::move(sink));
  else
    state_->queues.push_back(std::make_unique<detail::SinkQueue>(
        std::move(sink), std::size_t(state_->config.sink_queue), state_->sink_timeout()));
}

void Session::add_rule(std::unique_ptr<Rule> rule) {
  if (!rule) throw Error("Session::add_rule: no rule");
  const std::lock_guard lock(state_->mutex);
  if (state_->rules_fixed) throw Error("Session::add_rule: rules are added before the first begin_step");
  state_->rules.push_back(std::move(rule));
  state_->build_tables();
}

void Session::begin_step(std::int64_t step) {
  const std::lock_guard lock(state_->mutex);
  state_->rules_fixed = true;
  state_->current_step.store(step, std::memory_order_relaxed);
  if (!state_->first_step) state_->first_step = step;
  state_->recorder.begin_step(step);
}

void Session::restart_step(std::int64_t step) {
  State& s = *state_;
  const std::lock_guard lock(s.mutex);
  s.current_step.store(step, std::memory_order_relaxed);
  s.recorder.restart_step();
  s.metrics.restart_step();
  for (const auto& rule : s.rules) {
    try {
      rule->restart_step(step);
    } catch (const std::exception& e) {
      s.hook_error(std::string("restart_step: ") + e.what());
    }
  }
}

// Note [Pause channel]
// A breakpoint stops the training thread where it is, with the tensors alive. The Session cannot
// block inside observe: the producer may be in the middle of its own bookkeeping, and the
// tensors it can show (the op's inputs, the parameters) are the producer's. So a sink that wants
// to pause (Sink::wants_pauses) is asked, after the rules ran and outside the lock, whether to
// stop at this observation (pause_at, with the statistics and the findings it raised); the
// Session answers the observation with Verdict::pause, remembers which sinks asked (per thread),
// and the producer calls Session::pause with a PausePoint at its next safe point, which hands
// the point to those sinks' on_pause: that call is the pause. The LibTorch adapter pauses right
// after the op (its output and the inputs it kept are alive, the dispatcher key excluded, so the
// sink can run torch ops unobserved); the Probe after its observe call. No lock of the Session
// is held while paused: other threads keep observing, and the sink may read the Session.
namespace {
struct PendingPause {
  const void* session = nullptr;
  std::vector<Sink*> sinks;
};
thread_local PendingPause t_pending_pause;
}  // namespace

Verdict Session::observe(const Observation& observation) {
  State& s = *state_;
  const bool pauses = s.pauses_wanted.load(std::memory_order_acquire);
  try {
    // Measurements that read tensor memory run outside the lock, so observers on several
    // threads scan in parallel; only the rule state is serialised.
    thread_local std::vector<Reader> readers;
    readers.clear();
    const Plan plan = s.plan(observation, readers);
    Measured m = s.measure(observation, plan);
    const bool finite = m.stats.nonfinite() == 0;
    std::vector<Finding> raised;
    // Note [Light outputs]: a finite observation that no rule reads further (most backward and
    // optimizer outputs) only leaves its summary in the flight recorder.
    if (plan.need <= Need::nonfinite && finite && !plan.full && !plan.histogram) {
      const std::lock_guard lock(s.mutex);
      ++s.observations;
      s.recorder.record(observation, m.stats);
    } else {
      // A non-finite output whose producer answers only on demand: ask it now, outside the lock.
      Observation resolved = observation;
      std::string node;
      if (!finite && (observation.role == Role::output || observation.role == Role::update)) {
        resolved.input_kinds = observation.resolve_input_kinds();
        if (resolved.input_kinds) resolved.inputs_finite = resolved.input_kinds->finite();
        if (observation.phase == Phase::backward && observation.node.empty() &&
            observation.inputs != nullptr) {
          node = observation.inputs->autograd_node();
          resolved.node = node;
        }
      }
      resolved.inputs = nullptr;
      for (Reader& r : readers) {
        if (r.needs.measure) r.measured = r.rule->measure(observation, m.stats, m.has_zero);
      }
      // A second pass over the tensor, on histogram steps only (TensorFlow's fixed buckets, so the
      // outputs of one module add up into one histogram).
      if (plan.histogram) {
        bool reserved = false;
        {
          const std::lock_guard lock(s.mutex);
          reserved = s.metrics.reserve_histogram(observation);
        }
        if (reserved) m.histogram = histogram_tensorflow(observation.value).counts;
      }
      const std::lock_guard lock(s.mutex);
      s.capture = pauses ? &raised : nullptr;
      s.dispatch(resolved, m, readers);
      s.capture = nullptr;
    }
    Verdict verdict(finite);
    if (pauses) verdict.pause = s.ask_pause(observation, m.stats, raised);
    return verdict;
  } catch (const std::exception& e) {
    // Note: nothing throws into the producer's (the user's) loop; the failure is reported.
    const std::lock_guard lock(s.mutex);
    s.capture = nullptr;
    s.hook_error(std::string(observation.module) + " " + std::string(observation.op) + ": " + e.what());
  }
  return std::nullopt;
}

bool Session::State::ask_pause(const Observation& o, const Stats& stats, const std::vector<Finding>& raised) {
  std::vector<std::shared_ptr<Sink>> asked;
  {
    const std::lock_guard lock(mutex);
    asked = pausers;
  }
  PendingPause& pending = t_pending_pause;
  pending.session = this;
  pending.sinks.clear();
  for (const auto& sink : asked) {
    if (sink->pause_at(o, stats, raised)) pending.sinks.push_back(sink.get());
  }
  return !pending.sinks.empty();
}

void Session::pause(const PausePoint& point) {
  State& s = *state_;
  PendingPause& pending = t_pending_pause;
  if (pending.session != &s) return;
  std::vector<Sink*> sinks;
  sinks.swap(pending.sinks);
  for (Sink* sink : sinks) {
    try {
      sink->on_pause(point);
    } catch (const std::exception& e) {
      const std::lock_guard lock(s.mutex);
      s.hook_error(std::string("pause: ") + e.what());
    }
  }
}

void Session::end_step(std::int64_t step, std::optional<double> loss) {
  State& s = *state_;
  const std::lock_guard lock(s.mutex);
  for (const auto& rule : s.rules) {
    try {
      rule->end_step(step, loss, s);
    } catch (const std::exception& e) {
      s.hook_error(std::string("end_step: ") + e.what());
    }
  }
  if (s.metrics_wanted.load(std::memory_order_relaxed)) {
    // One StepMetrics a step, shared by every queue.
    const auto metrics = std::make_shared<const StepMetrics>(s.metrics.end_step(step, loss));
    for (const auto& sink : s.sinks) {
      try {
        sink->on_step(*metrics);
      } catch (const std::exception& e) {
        // Note: a sink that cannot write (a full disk) must not stop training; it is reported.
        s.hook_error(std::string("sink: ") + e.what());
      }
    }
    for (const auto& queue : s.queues) queue->step(metrics);
  }
  s.recorder.end_step(loss);
  ++s.steps;
  if (!s.first_step) s.first_step = step;
  s.last_step = step;
  if (s.dump_at_step && step >= *s.dump_at_step) {
    try {
      s.write_flight_recorder();
    } catch (const std::exception& e) {
      s.hook_error(std::string("flight recorder: ") + e.what());
    }
  }
  s.update_report(/*at_step_end=*/true);
}

Tier Session::tier() const noexcept {
  const State& s = *state_;
  const std::int64_t step = s.current_step.load(std::memory_order_relaxed);
  if (s.diagnose_armed.load(std::memory_order_relaxed) &&
      step >= s.diagnose_from.load(std::memory_order_relaxed) &&
      step <= s.diagnose_until.load(std::memory_order_relaxed))
    return Tier::diagnose;
  return s.tier.load(std::memory_order_relaxed);
}

void Session::set_tier(Tier tier) noexcept {
  state_->tier.store(tier, std::memory_order_relaxed);
}

void Session::diagnose_steps(std::int64_t first, std::int64_t count) noexcept {
  if (count <= 0) return;
  const std::lock_guard lock(state_->mutex);
  state_->open_diagnose(first, first + count - 1);
}

bool Session::should_stop() const noexcept {
  return state_->config.stop_on_error && state_->error_found.load(std::memory_order_acquire);
}

RunSummary Session::finish() {
  State& s = *state_;
  const std::lock_guard lock(s.mutex);
  if (s.finished) return *s.finished;
  if (s.dump_at_step) s.write_flight_recorder();  // the run ended inside the window
  // Note [Sink delivery]: what the queued sinks hold is delivered first, so that the summary
  // counts what they dropped and what they threw.
  std::int64_t dropped = 0;
  for (const auto& queue : s.queues) {
    if (!queue->drain(s.sink_timeout()))
      s.hook_error("sink " + queue->name() + ": still delivering after " +
                   std::to_string(s.config.sink_finish_timeout_s) +
                   " s; the rest of its events are abandoned");
    for (std::string& e : queue->take_errors()) s.hook_error(std::move(e));
    if (const std::int64_t n = queue->dropped(); n > 0) {
      dropped += n;
      s.hook_error("sink " + queue->name() + ": dropped " + std::to_string(n) +
                   " events it was too slow to take (RunConfig::sink_queue)");
    }
  }
  s.finished = s.summary();
  s.finished->dropped_sink_events = dropped;
  for (const auto& sink : s.sinks) sink->on_run_end(*s.finished);
  std::optional<std::string> failure;
  for (const auto& queue : s.queues) {
    if (auto error = queue->finish(*s.finished, s.sink_timeout()); error && !failure)
      failure = "sink " + queue->name() + ": " + *error;
  }
  if (failure) throw Error(*failure);
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
